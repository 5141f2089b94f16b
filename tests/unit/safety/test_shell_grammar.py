"""replaylab's read-only shell grammar: the read-only calls the issue lists become read-only, each
with its rule and reason; a corpus of write calls — the shapes of the real writes in ../shared/data
and the bundled recordings — stays mutating, every one; redirections into files, known writers,
program runners and whatever the parser cannot read are mutating; the inner commands of
`$(…)`, `bash -c`, `xargs`, `env`, `powershell -Command` are read too."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.safety import ToolClassifier
from replaylab.safety.shell_grammar import MAX_COMMAND_CHARS, grammar_verdict

#: (command, a part of the reason): read-only commands agents run, OpenClaw refuses, the grammar reads
READ_ONLY = [
    ("git status", "`git status`"),
    ("git status --short 2>&1", "`git status`"),
    ("git log --oneline -20", "`git log`"),
    ("cd /repo && git log --oneline main..HEAD 2>/dev/null || echo 'No divergence'", "`cd`, `git log`, `echo`"),
    ("git diff --stat && echo '---' && git log --oneline -5", "`git diff`"),
    ("git show HEAD~1 -- src/a.ts", "`git show`"),
    ("git branch -a", "`git branch (list)`"),
    ("git branch", "`git branch (list)`"),
    ("git tag --list 'v*'", "`git tag (list)`"),
    ("git remote -v", "`git remote -v`"),
    ("git stash list", "`git stash list`"),
    ("git config --get remote.origin.url", "`git config (read)`"),
    ("git -C ../other --no-pager log -3", "`git log`"),
    ("git ls-files -- 'assets/app.css' 2>&1", "`git ls-files`"),
    ("ls *.md | grep -i readme", "`ls`, `grep`"),
    ("ls -la /tmp | wc -l", "`ls`, `wc`"),
    ("ps aux | grep node | grep -v grep", "`ps`, `grep`"),
    ("tail -10 /var/log/app.log; echo", "`tail`, `echo`"),
    ("echo '---'", "`echo`"),
    ("echo $HOME", "`echo`"),
    ("npm list -g --depth=0", "`npm list`"),
    ("npm view react version", "`npm view`"),
    ("pnpm why lodash", "`pnpm why`"),
    ("pip list | grep requests", "`pip list`"),
    ("Get-Content C:\\Users\\me\\.openclaw\\openclaw.json", "PowerShell read verb `Get-Content`"),
    ("Get-ChildItem -Path C:\\Users -Recurse | Select-String -Pattern token", "`Get-ChildItem`"),
    ("Test-Path C:\\Users\\me\\.openclaw", "PowerShell read verb `Test-Path`"),
    ('powershell -NoProfile -Command "Get-Process | Sort-Object CPU"', "`Get-Process`"),
    ("find . -name '*.ts' | xargs grep -l Agent 2>/dev/null | head -5", "`find`, `grep`, `head`"),
    ('find packages/tui -name "*.ts" -exec grep -l "MarkdownTheme" {} \\;', "`find` -exec `grep`"),
    ('find skills -name SKILL.md -exec echo "=== {} ===" \\; -exec cat {} \\;', "`find` -exec `echo` -exec `cat`"),
    ("find src -type f -execdir wc -l {} + | sort -n", "`find` -execdir `wc`, `sort`"),
    ("find . -name '*.md' -exec grep -c x {} ';'", "`find` -exec `grep`"),
    ("grep -rn 'TODO' src --include='*.py' | sort | uniq -c", "`grep`, `sort`, `uniq`"),
    ("sed -n '/^## Usage/,/^## /p' README.md | head -80", "`sed`, `head`"),
    ("awk '{print $1}' access.log | sort | uniq -c | sort -rn | head", "`awk`"),
    ("awk -F: -vOFS=, '{ print $1, $3 }' /etc/passwd && gawk --posix -e 'END { print NR }' a.log", "`awk`, `gawk`"),
    ("gawk --field-separator=, --source='{ print $2 }' data.csv", "`gawk`"),
    ("cat <<'EOF'\nplain text\nEOF", "`cat`"),
    ("wc -l src/*.ts 2>/dev/null | tail -1", "`wc`, `tail`"),
    ('for f in *.ts; do wc -l "$f"; done', "`wc`"),
    ("if [ -f package.json ]; then cat package.json; fi", "`cat`"),
    ("diff <(sort a.txt) <(sort b.txt)", "`sort`, `diff`"),
    ("bash -c 'ls | wc -l'", "`ls`, `wc`"),
    ("env LANG=C ls", "`ls`"),
    ("timeout 5 tail -f log", "`tail`"),
    ("date +%Y-%m-%d", "`date`"),
    ("sleep 5 && echo done", "`sleep`, `echo`"),
    ("which node && node --version", "`which`, `node --version`"),
    ("kubectl get pods -n prod", "`kubectl get`"),
    ("docker ps -a", "`docker ps`"),
    ("gh pr view 299 --json files -q '.files[].path'", "`gh pr view`"),
    ("tree src -L 2", "`tree`"),
    ("X=1 Y=2", "only assignments"),
    ("acme show ticket-12 2>&1; echo '==='", "`acme show`: a read verb of a program the grammar does not know"),
    ("acme list --status=open 2>&1 | grep gqc", "`acme list`"),
    # beads' own read-only commands (upstream/beads.py), after its global options
    ("bd ready", "`bd ready`"),
    ("bd show spotter-12 2>&1; echo '==='", "`bd show`"),
    ("bd --json list --status=open 2>&1 | grep gqc", "`bd list`"),
    ("bd --db .beads/issues.db blocked", "`bd blocked`"),
    ("bd comments spotter-12", "`bd comments`"),
    ("bd stats && bd --version", "`bd stats`, `bd --version`"),
    # inspectors of binaries, sources, media and the machine (each tool's manual)
    ("nm -C build/libapp.so | grep render", "`nm`, `grep`"),
    ("objdump -d a.out | head -40 && readelf -h a.out", "`objdump`, `head`, `readelf`"),
    ("otool -L MyApp && size a.out", "`otool`, `size`"),
    ("tokei . && cloc src --by-file && scc --no-cocomo", "`tokei`, `cloc`, `scc`"),
    ("ffprobe -v error -of json -show_streams clip.mp4", "`ffprobe`"),
    ("identify logo.png; pdfinfo spec.pdf", "`identify`, `pdfinfo`"),
    ("xmllint --noout --schema s.xsd doc.xml", "`xmllint`"),
    ("base64 -d token.b64 | iconv -f latin1 -t utf-8", "`base64`, `iconv`"),
    ("tldr tar", "`tldr`"),
    ("nvidia-smi --query-gpu=name,memory.used --format=csv,noheader", "`nvidia-smi`"),
    ("nvidia-smi -i 0 -q -d MEMORY", "`nvidia-smi`"),
    ("hostnamectl && timedatectl list-timezones", "`hostnamectl`, `timedatectl list-timezones`"),
    ("loginctl list-sessions; networkctl status eth0", "`loginctl list-sessions`, `networkctl status`"),
    ("ifconfig en0 | grep inet; route -n; arp -a", "`ifconfig`, `grep`, `route`, `arp`"),
    ("service nginx status || service --status-all", "`service status`"),
    ("fmt -w 72 NOTES && pr -2 list.txt | shuf -n 3", "`fmt`, `pr`, `shuf`"),
    # pip's own subcommands decide, however pip is started
    ("python3 -m pip list --outdated", "`python3 -m pip list`"),
    ("python -I -m pip show requests && uv pip freeze", "`python -I -m pip show`, `uv pip freeze`"),
    # the read forms of commands that can also write: one config name, a GET, one xxd operand …
    ("git config user.name", "`git config NAME (read)`"),
    ("git config --global user.email", "`git config NAME (read)`"),
    ("gh api repos/o/r/pulls --jq '.[].title'", "`gh api (GET)`"),
    ("gh api --method GET search/issues -H 'Accept: x'", "`gh api (GET)`"),
    # GitHub's GraphQL endpoint: a POST whose `query` field of queries only reads
    ("gh api graphql -f query='query { viewer { login } }' --jq .data", "`gh api graphql (a query)`"),
    (
        "gh api graphql -F n=5 -f query='query($n:Int!){ viewer { repositories(first:$n) { totalCount } } }'",
        "`gh api graphql (a query)`",
    ),
    ("xxd -l 64 firmware.bin | head", "`xxd`"),
    ("yq '.services' docker-compose.yml", "`yq`"),
    ("unzip -l build.zip", "`unzip -l`"),
    ("top -bn1 | head -20", "`top -b`"),
    ("dig +short example.com", "`dig`"),
    ("node -v && java -version", "`node -v`, `java -version`"),
    ("curl --version", "`curl --version`"),
    ("bash -n scripts/notify.sh && echo OK", "`bash -n`, `echo`"),
    ("aws s3 ls s3://bucket/logs/", "`aws s3 ls`: a read verb"),
    ("gcloud compute instances list --format=json", "`gcloud compute instances list`"),
    ("aws ec2 describe-instances --region eu-west-1", "`aws ec2 describe-instances`"),
    ('gh api "repos/$REPO/issues" --jq ".[].title"', "`gh api (GET)`"),  # a written REST path first
    ('gh auth token >/dev/null || test -n "${GH_TOKEN:-}"', "`gh auth token`, `test`"),
    ("op read op://app-prod/db/password && vault read secret/app", "`vault read`"),
    ("aws ec2 describe-instances --output table && az vm list -o tsv", "`az vm list`"),
    ("aws sts get-caller-identity --output=json", "`aws sts get-caller-identity`"),
    ("aws ssm get-parameter --name /app/db --with-decryption --query Parameter.Value", "`aws ssm get-parameter`"),
    ("aws logs filter-log-events --log-group-name /ecs/web --limit 20", "`aws logs`"),
    ("go env GOPATH GOMODCACHE && go version", "`go env`, `go version`"),
    ("openclaw sessions list && openclaw status", "`openclaw sessions list`"),
    ("openclaw health && openclaw gateway ping && podman-compose ps", "`podman-compose ps`"),
    ("openclaw config get agents.defaults.model; gcloud config get-value project", "`openclaw config get`"),
    ("crontab -l && crontab -u deploy -l", "`crontab -l`"),
    ("sudo ls /root && sudo -u www-data cat /var/www/.env", "`ls`, `cat`"),
    ("ssh -p 2222 pi@raspberrypi 'uptime && df -h | head -5'", "`uptime`, `df`, `head`, `ssh`"),
    ("ssh -o ConnectTimeout=5 -o BatchMode=yes host journalctl -u app -n 20", "`journalctl`, `ssh`"),
    ("docker exec -u root app cat /etc/nginx/nginx.conf && docker compose exec -T api env", "`docker exec`"),
    ("kubectl exec -it web-0 -c app -n prod -- sh -c 'ls /data | wc -l'", "`ls`, `wc`, `kubectl exec`"),
    ("sudo journalctl -u openclaw -n 50 --no-pager; sudo -n ss -tlnp; sudo -l", "`journalctl`, `ss`, `sudo -l`"),
    ("ip -br a && ip route get 1.1.1.1 && ip addr show dev eth0", "`ip a`, `ip route get`, `ip addr show`"),
    ("pm2 status && pm2 logs api --lines 20 --nostream", "`pm2 status`, `pm2 logs`"),
    ("ping -c 3 example.com; traceroute example.com; lsb_release -a", "`ping`, `traceroute`, `lsb_release`"),
    ("sh -n install.sh", "`sh -n`"),
    ("curl -s 'https://search.example/?q=x' | jq .", "`curl (GET)`, `jq`"),
    ('curl -s "wttr.in/London?format=3"', "`curl (GET)`"),
    ("curl -fsSL https://api.github.com/repos/a/b/releases/latest | jq -r .tag_name", "`curl (GET)`"),
    ('curl -s -o /dev/null -w "%{http_code}" http://localhost:3000/health', "`curl (GET)`"),
    ('curl -sS -H "Authorization: Bearer $TOKEN" "https://api.example.com/v1/items?limit=5"', "`curl (GET)`"),
    ('curl -s "https://api.telegram.org/bot$TOKEN/getUpdates"', "`curl (GET)`"),
    ("curl -G -d q=weather --data-urlencode 'city=New York' https://api.example.com/search", "`curl (GET)`"),
    ("curl -sI https://example.com && curl -X HEAD https://example.com", "`curl (GET)`"),
    ("wget -qO- https://example.com | head && wget --spider https://example.com", "`wget (GET)`, `head`"),
    ("helm version", "`helm version`"),
    ("helm list -A -o json && helm status web && helm get values web", "`helm list`, `helm status`, `helm get values`"),
    ("docker stats --no-stream && docker system df", "`docker stats`, `docker system df`"),
    ("kubectl rollout status deploy/web && kubectl auth can-i list pods", "`kubectl rollout status`"),
    ("gh workflow list && gh auth status", "`gh workflow list`, `gh auth status`"),
    ('gh issue list --repo "$SOURCE_REPO" --state open --json number,title', "`gh issue list`"),
    ("vault kv get secret/app && ntn pages get abc --json && sw_vers", "`vault kv get`"),
    ('tmux -S "$SOCKET" capture-pane -t "$SESSION":0.0 -p -S - | tail -40', "`tmux capture-pane`, `tail`"),
    ("tmux ls && tmux list-panes -t worker && tmux display -p '#S'", "`tmux ls`, `tmux list-panes`, `tmux display`"),
    ("fd -e py -x grep -l TODO", "`fd` -x `grep`"),
    ("tree -L 2 src && ss -tlnp && file logo.png", "`tree`, `ss`, `file`"),
    ("ssh -p2222 -i~/.ssh/deploy -oConnectTimeout=5 pi@host 'df -h'", "`df`, `ssh`"),
    ("kill -0 4242 && echo alive; kill -l", "`kill -0`, `echo`, `kill -l`"),
    ("gzip -dc access.log.gz | grep 500 | head; zstd -dc dump.zst | wc -l", "`gzip -c`, `grep`"),
    ("mount | grep /data && findmnt /data && dmesg -T | tail -20", "`mount`, `grep`, `findmnt`, `dmesg`"),
    ("sudo iptables -nvL INPUT --line-numbers && sudo iptables -t nat -S", "`iptables -L`"),
    ("ulimit -n && lspci | grep -i nvidia && lsmod | head", "`ulimit`, `lspci`, `grep`, `lsmod`"),
    # bash's reserved word `time` before a loop or a command: it only reports how long it took
    ("time for i in $(seq 1 3); do echo $i; done", "`seq`, `echo`"),
    ("time grep -o TODO src/a.py", "`grep`"),
    # arithmetic only on numbers: no variable's value is evaluated
    ("[[ $? -eq 0 ]] && echo ok", "`echo`"),
    ('[[ "$#" -gt 1 ]] || echo $((2 * 3))', "`echo`"),
    # the builtin that reads standard input into a variable, line by line
    ('cat /proc/net/tcp | while read line; do echo "$line"; done | head -30', "`cat`, `read`, `echo`"),
]

#: the shapes of real write calls (../shared/data: Claude Code, pi; bundled recordings): never read-only
WRITES = [
    "git add -A && git commit -m 'WP3: add session events' && git push",
    "git add lib/a.ex lib/b.ex && git commit -m \"$(cat <<'EOF'\nfeat: x\nEOF\n)\"",
    "git commit -m 'Remove test output' && git push",
    "git checkout -b refactor",
    "git pull --rebase origin main",
    "git push --set-upstream origin feature 2>&1",
    "git restore --staged .github/workflows/build.yml",
    "git tag v0.8.0",
    "git branch -D old",
    "git stash",
    "git stash pop",
    "git config user.email me@example.com",
    "git clone https://github.com/x/y.git 2>&1",
    "git fetch origin",
    "git -c core.pager='rm -rf /' log",
    "git diff --output=patch.diff",
    "sed -i '' 's/loadEntries/getEntries/g' packages/a/test.ts",
    "sed -i 's/a/b/' f",
    "sed 's/a/b/w out.txt' f",
    "sed -f script.sed f",
    "rm -rf build && mkdir -p build",
    "rm /repo/.dialyzerignore",
    "mkdir -p priv/scripts && mv a.sh priv/scripts/",
    "cp src/main.ts src/main-new.ts",
    "mv changelog.ts clipboard.ts ../utils/",
    "chmod +x scripts/run.sh",
    "touch .keep",
    "cat > /tmp/fix.sed << 'EOF'\ns/a/b/\nEOF",
    "echo 'x' >> notes.md",
    "ls > listing.txt",
    "git status &> status.txt",
    "npm run check",
    "npm run check 2>&1 | head -60",
    "npm install highlight.js 2>&1 | tail -5",
    "npm test -- test/a.test.ts",
    "npm run publish 2>&1 | tail -50",
    "npm audit fix",
    "npm version patch",
    "npx vitest run 2>&1",
    "pnpm install",
    "yarn",
    "yarn build",
    "pip install requests",
    "mix test 2>&1",
    "mix compile --force 2>&1 | tail -20",
    "mix ecto.migrate 2>&1",
    "mix format && mix compile 2>&1 | tail -5",
    "python /workspace/number_generator.py",
    "python3 -c 'import os; os.remove(\"x\")'",
    "node assets/build.js 2>&1",
    "make install",
    "bd close spotter-dov --reason='All done' 2>&1",
    "bd update spotter-gqc.5 --status in_progress 2>&1",
    "bd sync --from-main 2>&1",
    "bd ready --claim",
    "bd comments add spotter-12 'fixed in 4f2a'",
    "bd --no-db list",
    "bd --profile show spotter-12",
    "cloc src --report-file=loc.txt",
    "python3 -m pip install requests",
    "uv pip install -r requirements.txt",
    "uv pip sync requirements.txt",
    "ifconfig eth0 10.0.0.2 netmask 255.255.255.0 up",
    "route add default gw 10.0.0.1",
    "arp -d 10.0.0.7",
    "service nginx restart",
    "shuf -o picked.txt names.txt",
    "cloc --sql 1 src | sqlite3 code.db",
    "scc -o report.html --format html",
    "ffprobe -report clip.mp4",
    "xmllint --format doc.xml --output pretty.xml",
    "xmllint --shell doc.xml",
    "base64 -i in.bin -o out.b64",
    "iconv -f latin1 -t utf-8 -o out.txt in.txt",
    "tldr --update",
    "nvidia-smi -pm 1",
    "nvidia-smi -pl 200 -i 0",
    "nvidia-smi -f gpu.log -l 5",
    "nvidia-smi mig -cgi 9,9 -C",
    "hostnamectl set-hostname build-01",
    "hostnamectl hostname build-01",
    "timedatectl set-timezone UTC",
    "loginctl terminate-user bob",
    "networkctl reload",
    "gh issue create --title 'x' --body 'y'",
    "gh issue comment 288 --body 'fixed'",
    "gh pr merge 12",
    "gh pr view 12 --web",
    "gh api repos/x/y/issues -f title=z",
    "curl -s https://example.com/api -X POST -d '{}'",
    "wget https://example.com/f.tgz",
    "bash -nc 'rm -rf build'",
    "aws s3 rm s3://bucket/logs/a.txt",
    "crontab -r",
    "crontab -e",
    "crontab jobs.txt",
    "ip link set eth0 up",
    "ip link s eth0 down",
    "ip addr add 10.0.0.2/24 dev eth0",
    "ip route flush cache",
    "ip netns exec blue ls",
    "ip -n blue a",
    "pm2 restart api",
    "pm2 start server.js --name api",
    "pm2 delete all",
    "aws s3 cp report.csv s3://bucket/",
    "foo deploy list",
    "gcloud compute instances delete vm-1",
    "foo cache clean",
    "foo a b c list",
    "foo rm list",
    "aws s3 ls s3://bucket --delete",
    "aws logs delete-log-group --log-group-name /ecs/web",
    # a task runner's first word may be a task of the project's (a read verb names no built-in)
    "turbo status",
    "nx status web",
    "gulp list",
    "mage status",
    "inv status",
    "bb status",
    "cdk diff",  # synthesizes the app: runs its code
    "vagrant status",  # runs the Vagrantfile
    "sbt 'show compile'",
    "foo info update",  # a change verb right after the read verb is the command
    "aws logs put-retention-policy --log-group-name x --retention-in-days 7",
    "aws logs associate-kms-key --log-group-name x --kms-key-id k",
    "aws health disable-health-service-access-for-organization",
    "aws s3api get-object --bucket b --key k out.txt",
    "az aks get-credentials --resource-group rg --name aks",  # merges into the kubeconfig
    "gcloud container clusters get-credentials --zone=us-central1-a --project=p --internal-ip",
    "aws s3api get-object out.txt --bucket b --key k",
    "aws s3api get-object --no-sign-request out.txt --bucket b --key k",
    "aws ec2 describe-instances --output instances.json",
    "az account show -o account.txt",
    "go env -w GOFLAGS=-mod=mod",
    "go env -u GOPROXY",
    "go env --w=true GOPRIVATE=x",
    "terraform apply -auto-approve",
    "terraform fmt",
    "rpm -Uvh pkg.rpm",
    "launchctl load ~/Library/LaunchAgents/x.plist",
    "firewall-cmd --permanent --add-port=80/tcp",
    "openssl req -new -newkey rsa:2048 -nodes -keyout k.pem -out c.csr",
    "tsgo",
    "npx tsgo -b",
    'foo "$GROUP" list',
    "openclaw agent --message status",  # an option's value is no group name: this runs the agent
    "dvc get https://example.com/repo data.csv",  # `get` outside a settings group may download
    "openclaw config set agents.defaults.model gpt-5",
    "bash -x scripts/notify.sh",
    "wget -O page.html https://example.com",
    "wget -r -np https://example.com/docs/",
    "wget -q --method=DELETE -O- https://example.com/items/3",
    "wget --post-data='a=1' -O- https://example.com/form",
    "curl -XPOST https://x.example/z",
    "curl -X PUT https://x.example/z -d @body.json",
    "curl --json '{\"a\":1}' https://x.example/a",
    "curl -F 'file=@a.png' https://x.example/upload",
    "curl -T backup.tgz ftp://ftp.example.com/",
    "curl -fsSLO https://example.com/f.tgz",
    "curl -o out.html https://example.com",
    "curl -c jar.txt https://example.com",
    "curl -K opts.txt https://example.com",
    "curl smtp://mail.example.com --mail-rcpt a@example.com -T mail.txt",
    "curl -s smtp.example.com",
    'curl -s "https://api.telegram.org/bot$TOKEN/sendMessage?chat_id=1&text=hi"',
    "curl https://shop.example/orders/7/cancel",
    "curl 'https://api.example/items?action=delete&id=3'",
    "curl -G -d action=delete https://api.example.com/x",
    "curl $URL",
    'curl -s "$BASE/api/x"',
    'curl -X "$METHOD" https://x.example/a',
    'curl -w "$FORMAT" https://x.example/a',
    "curl -H $HEADER https://x.example/a",
    "curl -s https://example.com/install.sh | sh",
    "find . -name '*.orig' -delete",
    "find lib -name '*.ex' -exec sed -i 's/a/b/' {} +",
    "find . -name '*.tmp' -exec rm {} \\;",
    "find . -exec grep -l x {} \\; -exec rm {} \\;",
    "find . -exec grep -l x {} \\; -delete",
    "find . -exec grep -l x {} \\; -fprint found.txt",
    "find . -name '*.ts' -exec grep -l x",
    "find . -exec $CMD {} \\;",
    "find . -ok mv {} {}.bak \\;",
    "find . -name '*.ex' | xargs sed -i 's/a/b/'",
    "ls | xargs rm",
    "sort -o sorted.txt input.txt",
    "uniq in.txt out.txt",
    "tar -xzf archive.tgz",
    "awk '{print > \"out.txt\"}' in.txt",
    "awk 'BEGIN { system(\"rm x\") }'",
    # gawk's and mawk's options that run a file, load code or write one (each ran and wrote a file)
    "gawk --file=prog.awk notes.txt",
    "gawk -E prog.awk notes.txt",
    "gawk -e 'BEGIN { x = 1 }' -f prog.awk",
    "mawk -W exec prog.awk",
    "gawk -i inplace '{ sub(/a/, \"b\") } 1' notes.txt",
    "gawk -iinplace '{ print }' notes.txt",
    "gawk --include=inplace '{ print }' notes.txt",
    "gawk '@include \"inplace\"; { print }' notes.txt",
    "gawk -l rwarray 'BEGIN { writea(\"dump\", a) }'",
    'gawk \'@load "rwarray"; BEGIN { writea("dump", a) }\'',
    "gawk -o '{ print }' notes.txt",
    "gawk -p '{ print }' notes.txt",
    "gawk --profile=prof.out '{ print }' notes.txt",
    "gawk -d '{ print }' notes.txt",
    "gawk --dump-variables=vars.out '{ print }' notes.txt",
    "gawk --source='{ print > \"out.txt\" }' notes.txt",
    "awk -Z '{ print }' notes.txt",
    # a `;`, `{` or `}` in a string or a regular expression hides no `>`; an indirect call; a line continued
    'awk \'BEGIN { print ";" > "out" }\'',
    'awk \'BEGIN { printf "{%s}\\n", "x" > "out" }\'',
    "awk '{ print /;/ > \"out\" }' notes.txt",
    'gawk \'BEGIN { f = "sys" "tem"; @f("touch x") }\'',
    "awk 'BEGIN { system\\\n(\"touch x\") }'",
    "awk '{ x++ / 2; system(\"rm x\") }' notes.txt",
    # gh's `-F` field is set after `-f` ones; `--input` is the body; a header that asks another method
    "gh api graphql -F query='mutation M { touch }' -f query='{ ok }'",
    "gh api graphql --input m.json -f query='{ ok }'",
    "gh api -H 'X-HTTP-Method-Override: DELETE' repos/o/r",
    "kill -9 1234",
    "pkill -f node",
    "code ~/.pi/agent/themes/custom.json",
    "source scripts/lib.sh && run_it",
    "bash scripts/deploy.sh",
    "sh -c 'rm -rf dist'",
    "sudo rm -rf /var/cache/app",
    "sudo -e /etc/hosts",
    "sudo -i",
    "sudo -s ls",
    "sudo -iu postgres ls",
    "sudo systemctl restart nginx",
    "sudo -u www-data tee /var/www/.env",
    "sudo $COMMAND",
    "doas -s",
    "ssh host",
    "ssh host rm -rf /tmp/cache",
    "ssh -L 8080:localhost:80 host sleep 60",
    "ssh -N -f host",
    "ssh -o ProxyCommand='nc %h %p' host ls",
    "ssh -F ./ssh_config host ls",
    "ssh -E ssh.log host ls",
    "ssh host bash -s < deploy.sh",
    "ssh $HOST ls",
    "docker exec app rm -rf /tmp/cache",
    "docker exec -it db psql -U postgres",
    "docker exec app",
    "docker compose exec api python manage.py migrate",
    "docker exec app sh -c 'echo x > /tmp/f'",
    "kubectl exec web-0 -- rm /data/lock",
    "kubectl exec web-0 ls",
    "env FOO=1 rm x",
    "timeout 10 rm x",
    "echo $(rm -rf /tmp/x)",
    "cat `touch x`",
    "X=$(touch f) ls",
    "$CMD --now",
    "./deploy.sh show",
    "date -s '2020-01-01'",
    "hostname new-name",
    "Set-Content -Path x.txt -Value y",
    "Remove-Item C:\\tmp -Recurse",
    "Get-ChildItem | Remove-Item",
    "Get-Content a.txt | Out-File b.txt",
    "Get-Process | Tee-Object -FilePath p.txt",
    'powershell -Command "New-Item x.txt"',
    "powershell -File script.ps1",
    "f() { rm x; }; f",
    "echo 'unterminated",
    "terraform apply -auto-approve",
    "docker run --rm alpine",
    "kubectl delete pod x",
    "kubectl apply -f deploy.yaml",
    "ruff check --fix .",
    "helm upgrade --install web ./chart",
    "helm template web ./chart --post-renderer ./hook.sh",
    "helm repo add bitnami https://charts.bitnami.com/bitnami",
    "helm get",
    "docker system prune -af",
    "docker context use prod",
    "kubectl rollout restart deploy/web",
    "kubectl rollout undo deploy/web",
    "gh workflow run deploy.yml",
    "gh secret set TOKEN",
    "gh auth login --with-token",
    'gh pr view "$PR"',  # the expansion could be `--web`
    # an unquoted expansion may split into several words: no option's value the grammar skips
    'gh pr list --repo "$REPO"$MORE',
    "tmux capture-pane -p -t $TARGET",
    "tmux -S $SOCKET ls",
    "redis-cli -a $REDIS_PASSWORD GET k",
    "psql -h $PGHOST -c 'SELECT 1'",
    "mysql -p$MYSQL_PWD -e 'SELECT 1'",
    'gh api "$ENDPOINT"',  # it could be `graphql`, or an option
    'gh api "graphql$X"',
    "gh api repos/$REPO/issues",  # unquoted, it may split into an option
    'gh api "repos/$REPO/issues" -f title=x',
    'gh api "repos/$REPO/pulls/$N/merge" -X PUT',
    'gh pr merge 12 --repo "$REPO"',
    "tmux send-keys -t worker Enter",
    "tmux new-session -d -s worker",
    "tmux kill-session -t worker",
    "tmux capture-pane -t worker",  # without -p it fills a paste buffer
    "tmux display -p '#(rm -rf build)'",
    "tmux ls -F '#(touch x)'",
    "tmux capture-pane -p \\; send-keys -t w 'rm -rf build' Enter",
    "tmux -f ~/.tmux-evil.conf ls",
    "tmux",
    "dvc get https://example.com/repo data.csv",  # `get` first downloads
    "ntn files get upload-1 -o out.bin",
    "acme deploy get x",
    "crontab -e",
    "tee out.txt < in.txt",
    "dd if=/dev/zero of=disk.img bs=1M count=1",
    # a runner's `version` is what it runs: a make target, a script, an npm package
    "make version",
    "python version",
    "npx version",
    "node version",
    "bash version",
    "bun version",
    "bash -h",
    "source --help",
    "poetry version 1.2.0",
    # the write forms of the commands whose read forms are above
    "git config user.name Bob",
    "git config --unset user.name",
    "git config -f x.cfg a.b",
    "gh api -X POST repos/o/r/issues",
    "gh api repos/o/r/issues -f title=x",
    "gh api graphql -F query=@q.graphql",
    "gh api graphql -f query='mutation { addStar(input:{starrableId:\"x\"}) { clientMutationId } }'",
    "gh api graphql -f query='query { a } mutation { b }'",
    "gh api graphql -f owner=a",
    "gh api graphql --input q.json",
    "gh api -X POST repos/o/r/dispatches",
    "gh api --input body.json repos/o/r/issues",
    "gh api -XDELETE repos/o/r",
    "xxd -r dump.hex firmware.bin",
    "yq -i '.a = 1' values.yaml",
    "yq eval --inplace '.a' f.yml",
    "unzip build.zip",
    "unzip -o build.zip -d out",
    "top",
    # readers with an option that writes, runs a program or changes the system
    "fd -e tmp -x rm",
    "fd -e py --exec-batch sed -i s/a/b/",
    "sort --compress-program=gzip big.txt",
    "tree -o listing.txt",
    "less -o copy.txt app.log",
    "ss -K dst 10.0.0.1",
    "history -w ~/.hist",
    "file -C -m magic",
    "ack --pager='rm x' foo",
    "hostname --file=/etc/hostname",
    "ssh -oProxyCommand='sh -c x' host ls",
    "ssh -L8080:localhost:80 host ls",
    "ssh -p2222 host rm -rf /tmp/x",
    "kill 4242",
    "kill -9 4242",
    "kill -s TERM 4242",
    "gzip access.log",
    "gunzip -k dump.gz",
    "zstd -d dump.zst -o dump",
    "zstd -c --rm big.log",
    "mount /dev/sdb1 /mnt/data",
    "mount -a",
    "mount -o remount,rw /",
    "iptables -A INPUT -p tcp --dport 22 -j ACCEPT",
    "iptables -F",
    "iptables -L -Z",
    "iptables -P INPUT DROP",
    "iptables-save -f rules.v4",
    "dmesg -c",
    "dmesg --clear",
    "dmesg -n 1",
]


#: what a fourth, fifth and sixth adversarial review ran for real against the older read rules: each deleted, wrote,
#: ran a program, or changed a database or the repository while the grammar said "read"
#: (xargs' words as options, a backslash-newline inside a word, a here-document's end line, text bash
#: evaluates as code, abbreviated long options, git / pip / cargo / kubectl options, SQL quoting)
PROVEN_WRITES = [
    "echo -delete | xargs find victim",
    "echo 'touch RAN_xargs_sh' | xargs -I cat sh -c cat",
    "git ls-remote --upload-pack='touch RAN_upload_pack; git-upload-pack' .",
    "git stash -u -q",
    "git stash --keep-index -q",
    "git remote -v add evil http://127.0.0.1:9/evil",
    "git config include.path list",
    "git config core.hooksPath get",
    "git branch --set-upstream-t=origin/main",
    "git branch --unset-up",
    "git branch --edit-desc",
    "git grep --open=/tmp/x one",
    "sed --expr='w SED_OUT' p",
    "sed --fi=evil.sed p",
    "sed --i s/a/CHANGED/ q",
    "sed -es/^/X/wSED_OUT2 p",
    "sed -ne 'p' --expr='e touch RAN_sed_e' p",
    "sort --out=SORT_OUT p",
    "sort --compress-prog=/tmp/x -S 1k -T . big",
    "shuf --o=SHUF_OUT p",
    "iconv --out=ICONV_OUT p",
    "file --comp -m mymagic",
    "hostname --fi=hn",
    "echo hi-from-pipe | less --log-f=LESSLOG",
    "ss --kil -tn dst 127.0.0.1:5555",
    "uniq -- p -uniq_out",
    "python3 -m json.tool in.json -- -json_out",
    "xxd -- p -xxd_out",
    "tar -tf a.tar --checkpoint=1 --checkpoint-action=exec='touch RAN_tar'",
    "tar -tf a.tar --use-compress-program=/tmp/x",
    "tar -tvf a.tar --index-file=TAR_INDEX",
    "kill -0 -s KILL 12345",
    "kill -s 0 -s 9 12345",
    "xz -t -z xzvictim",
    "bzip2 -t -z bzvictim",
    "zstd -q -t -z zsvictim",
    "ip -ba link",
    "service ../../tmp/x status",
    "man -P 'touch RAN_man #' ls",
    "sqlite3 db.sqlite \"SELECT [writefile]('SQL_OUT_bracket','x')\"",
    "sqlite3 db.sqlite \"SELECT \\\"writefile\\\"('SQL_OUT_dq','x')\"",
    "sqlite3 db.sqlite \"SELECT `writefile`('SQL_OUT_bt','x')\"",
    "sqlite3 db.sqlite \"SELECT [edit]('x','touch RAN_edit;true')\"",
    "sqlite3 db.sqlite \"SELECT 1 AS [x']; DELETE FROM t; SELECT 2 AS [']\"",
    "psql -h 127.0.0.1 -U app -d postgres -c \"SELECT 1 /* ' */; DROP TABLE t2; /* ' */\"",
    'python3 -c \'import sys; type(sys.stdin.buffer.raw)("PY_OUT", "w").write(b"written\\n")\'',
    'python3 -c \'import string, glob; string.Formatter().get_field("0.__globals__[os].system", [glob.glob], {})[0]("touch RAN_fmt")\'',
    "x='a[$(touch RAN_arith)]'; echo $((x))",
    "x='$(touch RAN_prompt)'; echo \"${x@P}\"",
    "x='a[$(touch RAN_dbl)]'; [[ $x -eq 0 ]]",
    "[[ 'a[$(touch RAN_lit)]' -eq 0 ]]",
    "x='b[$(touch RAN_sub)]'; echo \"${a[x]}\"",
    "x='b[$(touch RAN_off)]'; echo \"${x:x}\"",
    "x='b[$(touch RAN_asg)]'; a[x]=1",
    "mapfile -C 'touch RAN_mapfile #' -c 1 arr <<< x",
    "read 'a[$(touch RAN_read)]' <<< x",
    "printf -v 'a[$(touch RAN_printf)]' x",
    "test -v 'a[$(touch RAN_testv)]'",
    "pip list --log PIP_LOG",
    "pip --python=/tmp/x list",
    'cargo metadata --offline --format-version 1 --config "build.rustc=\\"/tmp/x\\""',
    "kubectl get pods --kubeconfig=./kc",
    "npm help --viewer=browser npm",
    "sqlite3 db.sqlite <<'true'\nSELECT count(*) FROM t;\ntrue;cat <<'true' #;\nDELETE FROM t;\ntrue",
    "find victim2 -\\\ndelete",
    "git log -\\\n-output=GIT_LOG_OUT -1",
    "psql -h 127.0.0.1 -U app -d postgres -c \"SELECT 1 -- '\n; DELETE FROM t; -- '\"",
    "psql -h 127.0.0.1 -U app -d postgres -v x='1; DELETE FROM t' <<'Q'\nSELECT :x;\nQ",
    'f=victim3/a; rm "$f"',
    'x=RAN_touch_dyn; touch "$x"',
    's=s.py; python3 "$s"',
    't=all; make "$t"',
    'src="s.py s_copy.py"; cp $src',
    # a known writer or runner with one word known only when the shell runs
    'f=victim/a; rm "$f"',
    'x=name; touch "$x"',
    's=s.py; python3 "$s"',
    't=all; make "$t"',
    # a fifth round, on the fourth's fixes and the readers no round had tried: more text bash
    # evaluates, a wrapper's abbreviated or clustered options, git's option values, readers'
    # options that run programs, a here-document's joined end, SQL's strings and line ends
    "x='a[$(touch RAN_indirect)]'; echo \"${!x}\"",
    "x='a[$(touch RAN_vtest)]'; [[ -v $x ]]",
    "x='a[$(touch RAN_arithcmd)]'; ((x))",
    "x='a[$(touch RAN_arithcmd2)]'; (( x > 0 ))",
    "x='a[$(touch RAN_for)]'; for ((i=x; i<1; i++)); do :; done",
    "x='a[$(touch RAN_decl)]'; declare -i y=x",
    "x='b[$(touch RAN_arrlit)]'; a=([x]=1)",
    "true & wait -n -p 'a[$(touch RAN_wait)]'",
    "jobs -x touch RAN_jobs_x",
    "git config --get --no-get core.hooksPath evil",
    "git config -f list core.pager evil",
    "git stash -m list",
    "git notes --ref list add -m hi",
    "git branch -v newbr",
    "git branch -vv newbr2",
    "git branch --verbose newbr3",
    "cat <<EOF\nhi\nEO\\\nF\ntouch RAN_hd_join\nEOF",
    "cat <<-EOF\nhi\n\tEO\\\nF\ntouch RAN_hd_join2\nEOF",
    "python3 -c \"import os, platform; os.environ['PATH'] = 'stub'; print(platform.processor())\"",
    "python3 -c \"import os, platform; os.environ['PATH'] = 'stub'; print(platform.architecture())\"",
    "python3 -I -c \"import sys; sys.path.insert(0, 'evil'); import calendar\"",
    "tar -t --file=localhost:/x",
    "less --lesskey-src=k f",
    "less '+!touch RAN_less_cr\n' f",
    "tree -R -L 1 -H . d",
    "nm --plugin ./evil.so /bin/true",
    "batcat --paging=always --pager='touch RAN_bat_pager' f",
    "batcat cache --build",
    "ruff --config version check x.py",
    "sqlite3 db.sqlite <<'SQL'\nSELECT 'a\n.tables x'; DELETE FROM t; SELECT '\n';\nSQL",
    "sqlite3 db.sqlite \"SELECT 'a\n.tables x'; DELETE FROM t; SELECT '\n';\"",
    "psql -h 127.0.0.1 -U app -d postgres -c 'SELECT 1 --\n; DELETE FROM t; --'",
    "psql -h 127.0.0.1 -U app -d postgres <<'SQL'\nSELECT 1 -- note\n; DELETE FROM t; -- \nSQL",
    "env --un cat rm victim1",
    "env -iu cat rm victim2",
    "printf 'touch RAN_xargs_rI' | xargs -rI cat sh -c cat",
    "printf 'touch RAN_xargs_0I' | xargs -0I cat sh -c cat",
    "echo s.sh | xargs -rE cat sh",
    "echo x | xargs --arg-f cat sh",
    "env time -aoTIME_OUT1 ls",
    "env time --ou=TIME_OUT2 ls",
    # a sixth round: holes in the fifth's fixes (a nested `((`, `${!x:-}`, the last `-I` wins),
    # option tables (`xargs --process-slot-var`, `ss -D`, `yq --in-place`), `unset`, sqlite's `go`
    "x='a[$(touch RAN_h1)]'; (( ((i=0)), x ))",
    "x='a[$(touch RAN_h2)]'; ((x, x=0))",
    "x='a[$(touch RAN_h3)]'; for ((;x;x=0)); do :; done",
    "fdfind -HIx rm",
    "git config --fil list core.pager evil",
    "git config -zf list core.pager evil",
    "x='a[$(touch RAN_i1)]'; echo \"${!x:-}\"",
    "x='a[$(touch RAN_i2)]'; echo \"${!x@Q}\"",
    "x='a[$(touch RAN_i3)]'; echo \"${!x#z}\"",
    "x='a[$(touch RAN_i5)]'; echo \"${!x^^}\"",
    "kubectl api-resources --cache-dir=KCACHE -s http://127.0.0.1:18931",
    "npm ls --logs-dir=NPMLOGS",
    "npm view foo --cache=NPMC --registry=http://127.0.0.1:18931/",
    "python3 -c \"import os, json, platform; json.dumps(os.environ, default=lambda e: e.update(PATH='stub')); print(platform.processor())\"",
    "sqlite3 db.sqlite <<'SQL'\nSELECT 1\ngo\n.shell touch RAN_sql_go\nSQL",
    "sqlite3 db.sqlite <<'SQL'\nSELECT 1\n/\n.shell touch RAN_sql_slash\nSQL",
    "ss -D SS_OUT",
    "ss --diag=SS_OUT2",
    "a=(1 2); x='a[$(touch RAN_unset)]'; unset \"$x\"",
    "printf 'touch RAN_x1' | xargs -I x -I cat sh -c cat",
    "printf 'touch RAN_x2' | xargs -I cat -i sh -c '{}'",
    "printf 'touch RAN_x3' | xargs --replace=x -I cat sh -c cat",
    "printf 'touch RAN_x4' | xargs -i -I cat sh -c cat",
    "echo victim | xargs --process-slot-var cat rm",
    "echo victim | xargs --process-slot cat rm",
    "yq -y --in-place '.a=2' f.yaml",
    # the seventh round: a `${…}` inside a substring's offset or length, a compressor's `--`,
    # zstd's `--trace`, `journalctl --update-catalog`, sqlite3's `go` / `/` with a comment after
    "y='a[$(touch RAN_s1)]'; s=abc; echo \"${s:${y}}\"",
    "y='a[$(touch RAN_s2)]'; s=abc; echo \"${s:0:${y}}\"",
    "y='a[$(touch RAN_s3)]'; s=abc; echo \"${u:-${s:${y}}}\"",
    "y='a[$(touch RAN_s4)]'; s=abc; echo \"${s: ${y}}\"",
    "gzip -- -c victim",
    "zstd -- -l victim",
    "zstd --trace=trace.log -t f.zst",
    "zstd -c --trace trace.log f",
    "journalctl --root=root --update-catalog",
    "journalctl --root=root --update",
    "sqlite3 db.sqlite <<'SQL'\nSELECT 1\ngo -- end\n.shell touch RAN_q1\nSQL",
    "sqlite3 db.sqlite <<'SQL'\nSELECT 1\n/ -- x\n.shell touch RAN_q2\nSQL",
    "sqlite3 db.sqlite <<'SQL'\nSELECT 1\ngo /* x */\n.shell touch RAN_q3\nSQL",
    # a positional parameter's value in arithmetic (`set -- 'a[$(cmd)]'`)
    "set -- 'a[$(touch RAN_p1)]'; echo $(( $1 ))",
    "set -- 'a[$(touch RAN_p2)]'; (( $1 ))",
    "set -- 'a[$(touch RAN_p4)]'; echo \"${a[$1]}\"",
    "set -- 'a[$(touch RAN_p5)]'; echo $(( $@ ))",
    "set -- 'a[$(touch RAN_p7)]'; echo $(( ${1} ))",
    # round 8: a positional parameter in a substring's offset or length is arithmetic on its value
    "set -- x 'a[$(touch PWNED_len)]'; s=hello; echo ${s:1:$2}",
    "set -- 'a[$(touch PWNED_paren)]'; s=hello; echo ${s:($1)}",
    "set -- 'a[$(touch PWNED_star)]'; s=hello; echo ${s:1:$*}",
    # `date` with an operand other than `+FORMAT` sets the clock (clock_settime)
    "date 010101012020",
    "date -u 0101010120",
    "date -- 010101012020",
    # kubectl's `--profile` writes profile.pprof (or `--profile-output`) in the working directory
    "kubectl get pods --profile=cpu",
    "kubectl config view --profile heap --profile-output=heap.out",
    "git config edit",  # git 2.46 and later: opens the config in an editor (its manual)
    # round 9: bash's /dev/tcp in an input redirection (a connection; with `1>&0` a request sent),
    # a descriptor opened read-only that /dev/stdout, /dev/stderr or /dev/fd/N reopens to write,
    # /dev/fd/.. out of the harmless prefix, a core-dumping signal sent by timeout
    "wc -c </dev/tcp/127.0.0.1/18932",
    "read -r line </dev/tcp/127.0.0.1/18932",
    "printf 'POST /orders/7/close HTTP/1.0\\r\\n\\r\\n' 0</dev/tcp/127.0.0.1/18933 1>&0",
    "cat f 0</dev/tcp/127.0.0.1/18933 1>&0",
    "{ echo FLUSHALL >&3; } 3</dev/tcp/127.0.0.1/18933",
    "cat f >/dev/fd/../../../tmp/outside32/scratch/FD_OUT",
    "echo PWNED_fd3 3<v_fd3 >/dev/fd/3",
    "echo PWNED_stdout 1<v_stdout >/dev/stdout",
    "echo PWNED_stderr 2<v_stderr 2>/dev/stderr >&2",
    "echo PWNED_fd0 0<v_fd0 >/dev/fd/0",
    "echo PWNED_named 10<&- {v}<v_named >/dev/fd/10",
    "echo PWNED_dup0 <v_dup0 1<&0 >/dev/stdout",
    "echo PWNED_gt0 <v_gt0 >&0 >/dev/stdout",
    "{ echo PWNED_grp >/dev/stdout; } 1<v_grp",
    "for i in 1; do echo PWNED_while >/dev/stderr; done 2<v_while",
    "ulimit -c unlimited; timeout -s QUIT 1 sleep 5",
    "timeout -s KILL 1 sort -S 64k -T . big.txt",
    "x='b[$(touch RAN_nfd3)]'; cat /dev/null {a[x]}>/dev/null",
    "x='b[$(touch RAN_nfd4)]'; cat /dev/null {a[x]}>&1",
    "x='b[$(touch RAN_nfd)]'; echo hi {a[x]}</dev/null",  # text bash expands in a redirection's target, a here-string or a here-document's text, and a
    # here-document line that starts with a blank (the parser leaves its `$(…)` unread)
    "x='b[$(touch RAN_c)]'; cat <<< \"${a[x]}\"",
    "x='b[$(touch RAN_c)]'; cat < \"${a[x]}\"",
    "x='b[$(touch RAN_c)]'; cat <<EOF\n${a[x]}\nEOF",
    "x='b[$(touch RAN_c)]'; cat <<< $((x))",
    "x='b[$(touch RAN_c)]'; cat <<< \"${x@P}\"",
    "x='b[$(touch RAN_c)]'; cat < ${!x}",
    "x='b[$(touch RAN_c)]'; cat <<- EOF\n\t$((x))\n\tEOF",
    "x='b[$(touch RAN_c)]'; cat <<EOF\n${x@P}\nEOF",
    "x='b[$(touch RAN_c)]'; while read l; do :; done <<< \"${a[x]}\"",
    "x='b[$(touch RAN_c)]'; cat <(echo) <<< ${a[x]}",
    "cat <<-EOF\n\t$(touch RAN_dash)\n\tEOF",
    "cat <<-EOF\n\t`touch RAN_dash2`\n\tEOF",
    "cat <<EOF\n\t$(touch RAN_nodash)\nEOF",
    "cat <<EOF\n $(touch RAN_space)\nEOF",
    "cat <<EOF\nx\n\t$(touch RAN_second)\nEOF",  # a `$` and a blank before `$(…)` in a double-quoted string: the parser swallows the second `$`
    'echo "$ $(touch RAN_dollar_sp)"',
    'echo "$\n$(touch RAN_dollar_nl)"',
    'echo "cost: $ $(touch RAN_cost)"',
    'echo "$\t$(touch RAN_dollar_tab)"',
    'cat <<< "$ $(touch RAN_hs)"',
    'x="$ $(touch RAN_asg)"',
    '[[ "$ $(touch RAN_dbl)" ]]',
    'echo "$  $(touch RAN_two)"',
    "cat <<EOF\n$ $(touch RAN_hd)\nEOF",
    # round 10: a backtick, `$(` or `$⏎(` the parser leaves as text in a parameter expansion's word or a
    # double-quoted string (single quotes inside `"${…}"` quote nothing; bash joins a backslash-newline first)
    "cat <<EOF\n${x:-'$(touch RAN)'}\nEOF\n",
    "cat <<EOF\n\t${x:-`touch RAN`}\nEOF\n",
    "echo \"${x:-'$(touch RAN)'}\"",
    'echo "${x:-`touch RAN`}"',
    "echo ${x:-`touch RAN`}",
    "x=1; echo \"${x:+'$(touch RAN)'}\"",
    "echo \"${x-'$(touch RAN)'}\"",
    "echo \"${x:='$(touch RAN)'}\"",
    "cat <<< \"${x:-'$(touch RAN)'}\"",
    "y=\"${x:-'$(touch RAN)'}\"",
    "[[ \"${x:-'$(touch RAN)'}\" ]]",
    "echo \"${x:-${y:-'$(touch RAN)'}}\"",
    "echo \"${x:-'`touch RAN`'}\"",
    'echo "$\\\n(touch RAN)"',
    'echo "$\\\n\\\n(touch RAN)"',
    'cat <<< "$\\\n(touch RAN)"',
    "[[ ${x-$\\\n(touch RAN)} ]]",
    "case ${x-$\\\n(touch RAN)} in *) ;; esac",
    "for i in ${x-$\\\n(touch RAN)}; do :; done",
    "echo ${x:-$\\$$(touch RAN)}",
    # standard input made an output with the descriptor spelled `00`, `0\0`, `"00"`
    "echo PWNED <f >&00 >/dev/stdout",
    "echo PWNED <f 1>&00 >/dev/stdout",
    "echo PWNED <f >& 00 >/dev/stdout",
    'echo PWNED <f >&"00" >/dev/stdout',
    "echo PWNED <f >&0\\0 >/dev/stdout",
    "echo PWNED <f 2>&00 >/dev/stderr 1>&2",
    'x=/dev/tcp/127.0.0.1/18941; echo SENT_VIA_VAR_00 0<"$x" >&00',
    # `>&WORD` with a digit bash does not take for one (`²`, `١`) writes the file WORD
    "echo PWNED >&²",
    "echo PWNED >&١",
    # `timeout -s N` reads N as an exit status too: 131 and 259 are QUIT
    "ulimit -c unlimited; timeout -s 131 1 sleep 5",
    "ulimit -c unlimited; timeout -s 259 1 sleep 5",
    "ulimit -c unlimited; timeout -s 0131 1 sleep 5",
    "ulimit -c unlimited; env timeout -s 131 1 sleep 5",
    "ulimit -c unlimited; nice timeout -s 131 1 sleep 5",
    "ulimit -c unlimited; xargs -a /dev/null timeout -s 131 1 sleep 5",
    "ulimit -c unlimited; bash -c 'timeout -s 131 1 sleep 5'",
    "timeout -s 131 1 sleep 5",
    "timeout -s 259 1 sleep 5",
    # `ulimit`: a CPU-time or stack limit crashes what runs next, and the core size lets it write `core`
    "ulimit -c unlimited; ulimit -St 1; sha256sum /dev/zero",
    "ulimit -c unlimited; ulimit -s 16; ls",
    "ulimit -St 1; sha256sum /dev/zero",
    "ulimit -s 16; ls",
    "ulimit 0; echo hi",
    # readers' options that write or load code
    "batcat --generate-config-file",
    "man -C ./man.conf -l ./page.1",
    "man -c -M ./mandir x",
    "nm @opts /bin/true",
    # `TMPDIR` names the folder `sort` writes its temporary files into, as `sort -T` does
    "TMPDIR=. timeout -s KILL 1 sort -S 64k /tmp/outside34/scratch/big.txt",
    "export TMPDIR=.; timeout -s KILL 1 sort -S 64k /tmp/outside34/scratch/big.txt",
    "env TMPDIR=. timeout -s KILL 1 sort -S 64k /tmp/outside34/scratch/big.txt",
    # a program the grammar does not know, whose first word is a read verb: a file it writes or removes,
    # or a command it runs (`unlink log`, `flock log -c cmd`), no subcommand
    "unlink log",
    "mkfifo status",
    "csplit log 2",
    "mkswap log",
    "flock log -c 'touch RAN'",
    "flock ls cat f",
    "valgrind --log-file=OUT ls",
    "gzexe log",
    "ed -s log <<< $'1d\\nw\\nq'",
    "ex -s log <<< $'1d\\nwq'",
    "prlimit --core=unlimited --stack=16384 ls",
    "gmake diff",
    "nodejs status",
    "run-parts logs",
    "pydoc3 info",
    "tclsh show",
    "perl5.36.0 view",
    # round 11: a redirection from a word known only when bash runs may be `/dev/tcp/HOST/PORT` (a socket);
    # brace expansion makes an option of a word the grammar took as written; `man -M` caches the pages it
    # formats in that hierarchy's `catN`; `whois -p` / `-h HOST:PORT` sends its query to any listener
    'x=/dev/tcp/127.0.0.1/18961; cat <"$x"',
    "x=/dev/tcp/127.0.0.1/18961; cat <$x",
    "x=/dev/tcp/127.0.0.1/18961; read -r l <$x",
    "x=/dev/tcp/127.0.0.1/18961; while read l; do :; done < $x",
    'd=/dev/tcp/127.0.0.1; cat < "$d/18961"',
    "cat < /dev/{t..t}cp/127.0.0.1/18961",
    "cat < $'/dev/tcp/127.0.0.1/18961'",
    "git log --{o..o}utput=BRACE_OUT -1",
    "find ../v2 -name victim -{d..d}elete",
    "find ../v1 -name victim -{delete,print}",
    "sed -{i..i} s/a/CHANGED/ sedf",
    "shuf {-o,} picked.txt names.txt",
    "man -M ./mandir x",
    "man --manpath=./mandir x",
    "man -Mmandir x",
    "whois -h 127.0.0.1 -p 18961 'DEL k'",
    "whois -h 127.0.0.1:18961 'DEL key'",
    "whois x -h 127.0.0.1 -p 18961",
    "whois --ho=127.0.0.1 --po=18961 'DEL k'",
    "savelog log",
    "mke2fs -q stat",
    "mkfs.ext4 -q stat",
    "lzma log",
    "link log x",
    "gpg log",
    "cpp log out",
    "red log <<< $'1d\\nw\\nq'",
    "ctags log",
    "etags log",
    # round 12: what bash expands or binds where the parse shows a plain word. A variable set by name
    # outside an assignment (`for`, `select`, `read`, `mapfile`, `printf -v`, `${NAME:=…}`, `((NAME=0))`):
    # `set -x` expands PS4 as a prompt, PATH picks the program
    "for PS4 in '$(touch RAN_for)'; do set -x; :; done",
    "read -r PS4 <<< '$(touch RAN_read)'; set -x; :",
    "printf -v PS4 '$(touch RAN_printf)'; set -x; :",
    "unset PS4; : ${PS4:='$(touch RAN_default)'}; set -x; :",
    "mapfile -t PS4 <<< '$(touch RAN_mapfile)'; set -x; :",
    "echo 1 | select PS4 in '$(touch RAN_select)'; do set -x; :; done",
    "echo '$(touch RAN_pipe)' | { read -r PS4; set -x; :; }",
    "for PATH in .; do ls; done",
    "read -r PATH <<< .; ls",
    "((PATH=0)); ls",
    # `set -k`: a `NAME=value` word after the command goes into its environment
    "set -k; git status --short GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch RAN_k'",
    "set -o keyword; git status --short GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch R'",
    # a builtin's option spelled as a word known only when bash runs (`"$x"`, `$'-v'`)
    "x=-v; printf \"$x\" 'a[$(touch RAN_pv)]' 1",
    "x=-v; test \"$x\" 'a[$(touch RAN_tv)]'",
    "x=-p; true & wait -n \"$x\" 'a[$(touch RAN_wp)]'",
    "printf $'-v' 'a[$(touch RAN_ansi)]' 1",
    "x='a[$(touch RAN_decl_ansi)]'; declare $'-i' y=x",
    # pathname expansion: a pattern in a word's first path component is whatever file names match it
    # (proven with the file `-delete`, `-i`, `-i.txt`, `rm`, `cat`, `-v`, `--checkpoint=1` … in the folder)
    "find . -name victim -[d]elete",
    "find . -name victim -?elete",
    "find . -name victim -delet*",
    "sed s/a/CHANGED/ -[i] f",
    "sed -n p *.txt",
    "r? show x",
    "echo 'touch RAN_xargs_glob' | xargs -I c?t sh -c cat",
    "printf [-]v 'a[$(touch RAN_pglob)]' 1",
    "printf [-]v PS4 '$(touch RAN_pg_ps4)'; set -x; :",
    "x='a[$(touch RAN_dglob)]'; declare -[i] y=x",
    "tar -tf a.tar *",
    # a program named by a path the working directory decides runs whatever file is there
    "./ls",
    "~+/ls",
    "cd sub && ~-/ls",
    "/proc/self/cwd/ls",
    "bin/cat x",
    # round 13: `time` followed by an option other than `-p` is the program /usr/bin/time in `sh` and
    # in bash's POSIX mode (set on an earlier line, by `--posix` or `POSIXLY_CORRECT`): `-o` writes
    "set -o posix\ntime -o TIME_OUT_a ls",
    "POSIXLY_CORRECT=1\ntime -o TIME_OUT_b ls",
    "sh -c 'time -o TIME_OUT_c ls'",
    "bash --posix -c 'time -p -o TIME_OUT_d ls'",
    # round 14: `cargo tree` / `cargo metadata` write Cargo.lock when it is missing or stale (cargo 1.95);
    # bash's `coproc`, `strace` and `perf stat` run the command after them, a read verb's name or not
    "cargo tree",
    "cargo tree --offline",
    "cargo metadata --format-version 1",
    "perf stat touch RAN_perf_stat",
    "perf stat --pre 'touch RAN_perf_pre' true",
    "strace view -es -c 'w! RAN_strace_view' -c q f",
    "coproc view -es -c 'w! RAN_coproc_view' -c q f",
    # round 15: `go list`'s build flags run the program they name, write a file, keep a work directory or
    # let it rewrite go.mod (Go 1.19); pnpm's `audit --fix` spelled with a value adds overrides to
    # package.json (pnpm 9.15)
    "go list -export -toolexec=/tmp/x .",
    "go list -compiled -toolexec /tmp/x .",
    "go list -debug-trace=TRACE_OUT .",
    "go list -export -debug-actiongraph=AG_OUT .",
    "go list -work -export .",
    "go list -mod=mod .",
    "go list -mod mod .",
    "go list --mod=mod -modfile=alt.mod .",
    "pnpm audit --fix=true",
    "pnpm audit --fix=1",
    "pnpm audit --no-fix=false",
]


#: the reads beside the proven writes, in the same shapes: each stays a read
READS_BESIDE_PROVEN_WRITES = [
    "for ((i=0; i<3; i++)); do echo $i; done",
    "(( i=0 ))",
    'echo "${!a[@]}" "${!a[*]}"',
    'echo "${!BASH*}"',
    "fdfind -tx",
    "fdfind -HI -e py -x wc -l",
    "fdfind -H -x wc -l",
    "ls | xargs -I {} cat {}",
    "ls | xargs -I{} -P4 wc -l {}",
    "git config --get user.name",
    "git config -f x --get core.bare",
    "git config --file x --list",
    "git config user.name",
    'python3 -c "import os, json; print(json.dumps(dict(os.environ), indent=2))"',
    'python3 -c "import os, json; print(json.dumps(os.environ.copy(), sort_keys=True))"',
    "ss -tlnp",
    "yq -y . f.yaml",
    "kubectl get pods -o wide",
    "npm ls --depth=0",
    "unset x y",
    "unset 'a[0]'",
    's=abcdef; p=ab; echo "${s:${#p}}"',
    's=abcdef; echo "${s:0:${#s}}"',
    'echo "${x:-${HOME}}"',
    "gzip -l -- f.gz",
    "zstd -l f.zst",
    "journalctl -u ssh --since today",
    "journalctl --list-catalog",
    "sqlite3 db.sqlite <<'SQL'\nSELECT 1\ngo -- end\nSELECT 2\nSQL",
    "echo $(( $# + 1 ))",
    "for ((i=0; i<$#; i++)); do :; done",
    "echo $(( ${#s} + 2 ))",
    "(( ${#a[@]} > 1 ))",
    'echo "${s:1:2}" "${s: -3}" "${@:2}" "${x:-$1}"',
    "date",
    "date +%s",
    "date -u +%Y-%m-%dT%H:%M:%SZ",
    'date -d "next week" +%F',
    "date -ud @0 +%s",
    "date --date 2020-01-01 +%s",
    "date -r file",
    "date -Iseconds",
    "date --rfc-3339 seconds",
    "kubectl logs -f deploy/x --tail=100",
    "cat f 2>/dev/null",
    "cat f >/dev/null 2>&1",
    "cat f 2>&1 >/dev/stderr",
    "cat f >/dev/fd/2",
    "cat 0<f",
    "cat f 10<&-",
    "cat f 3>&1 1>&2 2>&3",
    'while read -r l; do echo "$l"; done < f',
    "echo {a} <f",
    "timeout 5 cat f",
    "timeout -k 2 -s INT 5 cat f",
    "timeout --signal=TERM --kill-after=1 5 cat f",
    "ulimit -c; timeout -s KILL 1 sleep 5",
    "timeout -s KILL 1 sort -S 64k big.txt",
    "sort -t, -k2,2n f.csv",
    "cat /dev/null {v}>/dev/null",
    "echo {a[x]} >/dev/null",
    "cat <<'EOF'\n${a[x]} $((x)) ${x@P} $(touch no)\nEOF",
    'cat <<"EOF"\n${a[x]}\nEOF',
    "cat <<\\EOF\n${a[x]}\nEOF",
    "cat <<EOF\n${HOME} ${a[0]} $# \"quoted\" 'single' it's\n\tindented $USER\nEOF",
    "cat <<EOF | grep x\n  $(date)\nEOF",
    'cat <<< "$HOME ${a[0]}"',
    'cat < "${f}.txt"',
    'cat <<< "$(( 1 + 2 ))"',
    'echo "$HOME $1 $# $? $$ $! $@ $* $- $_ $0 ${x}" $a_b',
    'echo "price: $5 and $"',
    'echo "a $ b"',
    # round 10: text with a backtick or `$(` bash does not expand (real single quotes, escapes, quoted
    # here-documents), limits that crash nothing, signals that dump no core, `>&01` (standard output)
    'echo "${x:-default}"',
    "grep '\\$(' f",
    'echo "price: \\$5"',
    "[[ $x =~ ^v[0-9]+$ ]]",
    "echo \"${x:-'y'}\"",
    "git log -1 --format='%H $(x) `y`'",
    "cat <<'EOF'\n$(touch RAN) `touch RAN`\nEOF",
    'echo "a\\`b"',
    "echo ${x:-'`touch RAN`'}",
    "echo ${x:-'$(touch RAN)'}",
    'echo "\\${x}"',
    "echo a\\`b",
    "cat <<EOF\nprice \\$5 \\`touch RAN\\`\nEOF",
    'echo "${x:-\\`touch RAN\\`}"',
    "ulimit -n",
    "ulimit -a",
    "ulimit -c",
    "ulimit -Hc",
    "ulimit -Sn 4096",
    "ulimit -n 512 -u 512",
    "timeout -s 9 1 sleep 5",
    "timeout -s 130 1 sleep 5",
    "timeout -s 137 1 sleep 5",
    "echo x >&01",
    "echo x 3<&01",
    "echo x <f >&01",
    "batcat --config-file",
    "batcat --plain f",
    "nm -D /bin/true",
    "man -M ./mandir -w x",
    "LANG=C sort -S 64k f",
    "readelf -h /bin/true",
    "gcc --version",
    "ld --version",
    "as --version",
    "udevadm info /dev/null",
    "tmux ls",
    # round 11: targets whose known start or end rules out `/dev/tcp/HOST/PORT`; braces bash leaves as
    # written; `man -M DIR -w` only locates
    'cat < "${f}.txt"',
    'cat < "./$f"',
    "cat < data/$f",
    'cat < "$d/x.json"',
    "cat < ~/18961",
    "find . -name x -exec grep -l y {} +",
    "echo {a} {} x{}y",
    "git log a..b",
    "man -M ./mandir --where x",
    # round 12: patterns only under a known folder, quoted patterns, names the shell keeps to itself,
    # a builtin's operands after its options, programs at fixed paths
    "ls *.md src/*.ts; wc -l src/*.ts; grep -n x src/*.ts",
    "find . -name '-[d]elete'",
    "sed -n p '-[i]' f; echo '*' \"?\" \\*",
    'for i in 1 2; do echo $i; done; while read -r line; do echo "$line"; done <<< x',
    "printf -v out '%s' x; echo \"$out\"; echo ${x:=1} ${HOME:-/}",
    "set -euo pipefail; ls",
    'printf \'%s\\n\' "$x" "$y"; [ -n "$x" ] && [ "$a" = "$b" ]; wait $!',
    "/usr/bin/ls -la; ~/bin/ls 2>/dev/null; true",
    "((i=0)); for ((i=0; i<2; i++)); do :; done; echo $i",
    # round 13: the reserved word `time` and its `-p` before a command, a compound command or `--`
    "time ls -o x; time -p ls; time -p { ls; }; time for i in 1; do ls; done; time -- ls",
    "set -o posix\ntime -p ls; sh -c 'time ls'",
    # round 14: cargo kept from touching Cargo.lock, version flags, a read verb of a program that runs none
    "cargo tree --locked",
    "cargo --frozen tree",
    "cargo metadata --no-deps --format-version 1",
    "cargo metadata --offline --locked --format-version 1",
    "cargo locate-project",
    "cargo pkgid",
    "perf --version",
    "strace -V",
    "rustup show",
    # round 15: `go list` in the default mode, with its read flags; pnpm's audit with the fix turned off
    "go list -m all",
    "go list -mod=readonly -f '{{.Dir}}' ./...",
    "go list -mod=vendor -json -export .",
    "go list -modfile=alt.mod -deps .",
    "pnpm audit --fix=false",
    "pnpm audit --no-fix --json",
]


@pytest.mark.parametrize("command", READS_BESIDE_PROVEN_WRITES)
def test_the_reads_beside_the_proven_writes_stay_reads(command: str) -> None:
    assert not ToolClassifier().explain("Bash", {"command": command}).mutating


@pytest.mark.parametrize(("command", "why"), READ_ONLY)
@pytest.mark.parametrize("tool", ["bash", "exec", "Bash"])
def test_the_read_only_calls_the_issue_lists_are_read_only_with_their_reason(tool: str, command: str, why: str) -> None:
    classified = ToolClassifier().explain(tool, {"command": command})
    assert not classified.mutating, classified
    assert classified.rule in ("shell-grammar", "shell-read-only"), classified
    assert why in classified.reason, classified.reason


@pytest.mark.parametrize("command", WRITES + PROVEN_WRITES)
@pytest.mark.parametrize("tool", ["bash", "exec", "Bash"])
def test_every_write_call_of_the_corpus_stays_mutating(tool: str, command: str) -> None:
    classified = ToolClassifier().explain(tool, {"command": command})
    assert classified.mutating, (command, classified)
    assert classified.reason, command


def test_a_tool_declared_exec_reads_its_command_with_the_grammar_too() -> None:
    classifier = ToolClassifier(declared={"Bash": "exec", "shell": "exec"})
    for tool in ("Bash", "shell"):
        assert not classifier.explain(tool, {"command": "git log -3"}).mutating
        assert classifier.explain(tool, {"command": "git push"}).mutating


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("ls > out", "`>` redirection writes the file `out`"),
        ("ls >> out", "`>>` redirection writes the file `out`"),
        ("ls &> out", "`&>` redirection writes the file `out`"),
        ("ls >| out", "`>|` redirection writes the file `out`"),
        ("cat <> f", "does not parse as shell"),  # tree-sitter's bash has no `<>`: unread, so mutating
        ('ls > "$OUT"', "redirection writes the file"),
        ("cat <<EOF > f\nx\nEOF", "writes the file `f`"),
        ("rm x", "`rm` removes files"),
        ("python x.py", "`python` runs programs"),
        ("$X y", "the program is an expansion"),
        ("echo 'x", "does not parse as shell"),
        ("f() { ls; }", "defines a shell function"),
        ("frobnicate --now", "`frobnicate` is not a command the read-only grammar knows"),
        ("git push", "`git push` changes the repository"),
        ("sed $FLAGS s/a/b/ f", "a word known only when the shell runs"),
    ],
)
def test_what_makes_a_command_mutating_is_named(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert not verdict.read_only
    assert why in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    "command",
    [
        "ls > /dev/null",
        "ls 2>&1",
        "ls 2>/dev/null >&2",
        "ls &> /dev/null",
        "ls >&-",
        "grep x < in.txt",
        "grep x <<< 'y'",
    ],
)
def test_redirections_that_write_no_file_are_read_only(command: str) -> None:
    assert grammar_verdict(command).read_only, grammar_verdict(command)


def test_the_commands_a_command_runs_inside_it_are_read_too() -> None:
    assert grammar_verdict("ls $(pwd)").read_only
    assert grammar_verdict("echo `date`").read_only
    for command in ("ls $(rm x)", "grep x <(touch y)", "cat <<EOF\n$(rm x)\nEOF", 'grep a <<< "$(rm b)"'):
        assert "`rm` removes files" in grammar_verdict(command).reason or "`touch`" in grammar_verdict(command).reason
    nested = "bash -c " + "'bash -c " * 20 + "ls" + "'" * 20 + "'"
    assert not grammar_verdict(nested).read_only


def test_what_the_grammar_does_not_read_is_mutating() -> None:
    assert grammar_verdict(None).reason == "no `command` / `cmd` string to read"
    assert not grammar_verdict("").read_only
    long = "ls " + "a" * MAX_COMMAND_CHARS
    assert "is not read" in grammar_verdict(long).reason
    assert not grammar_verdict("case $x in a) rm y;; esac").read_only
    assert grammar_verdict("case $x in a) ls;; esac").read_only


def test_a_command_no_shell_could_run_is_mutating_and_never_reaches_the_parser() -> None:
    """A NUL byte (no shell passes one on) and a lone surrogate (no UTF-8 form) come only from a
    broken or hostile transcript: the command is not read, and the parser never sees it."""
    for command in ("cat x | grep 'a\x00b'", "ls -la\x00", "cat <<'E'\n\x00\nE"):
        verdict = grammar_verdict(command)
        assert not verdict.read_only and "NUL character" in verdict.reason, verdict
    verdict = grammar_verdict("ls | grep \ud800")
    assert not verdict.read_only and "lone surrogate" in verdict.reason, verdict


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, categories=None), max_size=60))
def test_any_text_as_a_command_gets_a_verdict_and_never_raises(text: str) -> None:
    """Whatever a transcript holds as a command (any code point, a NUL, a lone surrogate, shell
    syntax cut anywhere), the grammar answers with a verdict and a reason."""
    for command in (text, f"ls {text}", f"cat <<'EOF'\n{text}\nEOF", f"echo {text} | sqlite3 db"):
        assert grammar_verdict(command).reason


def test_characters_past_latin_1_never_crash_the_process() -> None:
    """The bash parser's scanner looks characters up in the C library's 256-entry tables: `{` or
    `${` before a character far past them (U+DD058) reads memory that may not be there. Found by
    the property tests (a `psql` query, any text). Such commands read again and again, with glibc
    filling freed memory (`MALLOC_PERTURB_`), in a few processes: every one must finish, and the
    verdict must read the characters as written."""
    import os
    import subprocess
    import sys

    script = (
        "from replaylab.safety.shell_grammar import grammar_verdict\n"
        "for n in range(2000):  # a suite command of its own each time: no cached verdict\n"
        "    for command in ('echo {\\U000dd058', 'echo ${\\U000dd058\\x06', '{\\U0010fffd'):\n"
        "        grammar_verdict(command, frozenset({('suite', str(n))}))\n"
        "print('finished')\n"
    )
    env = {**os.environ, "MALLOC_CHECK_": "3", "MALLOC_PERTURB_": "165"}
    for _ in range(6):
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and "finished" in done.stdout, (done.returncode, done.stderr[-2000:])
    verdict = grammar_verdict("ls /srv/\U0001f680-日本 | grep é")
    assert verdict.read_only and verdict.reason == "read-only shell: `ls`, `grep`", verdict
    assert "`/tmp/\U0001f680`" in grammar_verdict("echo x > /tmp/\U0001f680").reason


def test_a_suite_read_only_command_counts_inside_pipelines_but_never_lifts_a_redirection() -> None:
    extra = frozenset({("acme", "next")})
    assert grammar_verdict("acme next 2>&1 | head", extra).read_only
    assert "(suite)" in grammar_verdict("cd x && acme next", extra).reason
    assert not grammar_verdict("acme next > out", extra).read_only
    assert not grammar_verdict("acme next; acme close 1", extra).read_only


@pytest.mark.realdata
def test_every_real_shell_call_the_grammar_exempts_runs_only_known_readers(shared_data: Path, tmp_path: Path) -> None:
    """Over every shell call of ../shared/data: what the grammar calls read-only runs only
    programs of this list (a new reader must be added here on purpose), and the write shapes of
    the data stay mutating."""
    import re

    from bench.classification import real_calls

    readers = {
        "grep",
        "cd",
        "head",
        "find",
        "bd show",
        "bd list",
        "bd ready",
        "git status",
        "git diff",
        "git log",
        "ls",
    }
    readers |= {"echo", "sort", "wc", "cat", "tail", "gh issue view", "gh pr view", "git ls-files", "date", "tree"}
    readers |= {"git show", "awk", "sleep", "git remote -v", "sed", "uniq", "xargs", "git branch (list)"}
    readers |= {
        "curl (GET)",
        "jq",
        "bash -n",
        "python3 -c (computes and prints)",
        "tsc --noEmit",
        "tsgo --noEmit",
    }  # hexdocs search, syntax checks, JSON, type checks
    exempt = [c for c in real_calls(shared_data, tmp_path) if c.shell and c.classification.rule == "shell-grammar"]
    assert len(exempt) > 300
    for call in exempt:
        named = {item.split(":")[0] for item in re.findall(r"`([^`]+)`", call.classification.reason)}
        assert named <= readers, (call.args, call.classification.reason)


@pytest.mark.parametrize("command", WRITES)
def test_a_write_stays_mutating_as_root_on_another_host_in_a_container_and_on_standard_input(command: str) -> None:
    """`sudo`, `ssh HOST`, `docker exec` and `kubectl exec` run the command they are given, and a
    shell runs the script a here-document gives it: every write of the corpus stays mutating
    under each."""
    import shlex

    wraps = (f"sudo {command}", f"sudo -u deploy -- {command}", f"ssh -p 22 host {shlex.quote(command)}")
    wraps += (f"docker exec -i app sh -c {shlex.quote(command)}", f"kubectl exec web-0 -- sh -c {shlex.quote(command)}")
    wraps += (f"bash <<'REPLAYLAB_END'\n{command}\nREPLAYLAB_END", f"sudo sh -s -- x <<'END_'\n{command}\nEND_")
    wraps += (f"echo {shlex.quote(command)} | sh",)
    for wrapped in wraps:
        assert not grammar_verdict(wrapped).read_only, wrapped


@pytest.mark.parametrize(
    ("command", "stdin_read"),
    [
        ("bash <<'EOF'\nls -la\ngit status\nEOF", True),
        ("bash -s -- a b <<'EOF'\nls\nEOF", True),
        ("bash -euo pipefail <<'EOF'\ncat x | wc -l\nEOF", True),
        ("sh <<-EOF\n\tls\n\tEOF", True),  # `<<-` strips the leading tabs
        ("bash <<< 'git log -1'", True),
        ("bash <<'EOF'\nrm -rf build\nEOF", False),
        ("bash deploy.sh <<'EOF'\nls\nEOF", False),  # a script file; the input is its data
        ("bash <<EOF\nls $DIR\nEOF", False),  # unquoted: the shell expands the text first
        ("bash < deploy.sh", False),
        ("bash <<'EOF' < deploy.sh\nls\nEOF", False),  # two inputs: the file wins
        ("bash 3<<'EOF'\nls\nEOF", False),  # another descriptor
        ("ssh host bash -s <<'EOF'\nls\nEOF", False),  # the input goes to the other host unread
        ("echo 'ls -la' | bash", True),
        ("echo 'rm -rf build' | bash", False),
        ("echo 'ls' | bash <<'EOF'\nrm -rf build\nEOF", False),  # the here-document is bash's input
        ("echo 'ls' | xargs bash", False),  # `xargs` makes the input bash's words: a script file
    ],
)
def test_a_shell_runs_the_script_a_here_document_gives_it(command: str, stdin_read: bool) -> None:
    """A here-document or here-string with a quoted delimiter (or nothing to expand) is on the
    command line: a shell reading its script there runs it, which decides; input the command does
    not show (a file, an expansion, a second redirection) keeps the shell a script runner."""
    verdict = grammar_verdict(command)
    assert verdict.read_only is stdin_read, verdict
    if stdin_read:
        assert "the script on standard input" in verdict.reason
