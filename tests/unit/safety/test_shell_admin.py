"""System and infrastructure tools in the read-only shell grammar (`shell_admin.py`): `terraform`
/ `tofu` showing state and outputs, `rpm -q`, `launchctl list|print`, `firewall-cmd` asking,
`openssl` inspecting to standard output read; each in the mode that changes the system, writes a
file, runs a macro or loads code stays mutating, with its reason."""

from __future__ import annotations

import pytest

from replaylab.safety.shell_grammar import grammar_verdict


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("terraform show -json plan.tfplan | jq .", "`terraform show`"),
        ("terraform output -raw db_url", "`terraform output`"),
        ("terraform -chdir=infra state list", "`terraform state list`"),
        ("tofu state show aws_instance.web", "`tofu state show`"),
        ("terraform state pull > /dev/null", "`terraform state pull`"),
        ("terraform -version", "`terraform version`"),
        ("terraform validate -json", "`terraform validate`"),
        ("terraform fmt -check -recursive", "`terraform fmt -check`"),
        ("terraform fmt -write=false -diff", "`terraform fmt -check`"),
        ("terraform providers schema -json", "`terraform providers schema`"),
        ("terraform workspace show", "`terraform workspace show`"),
        ("rpm -qa | grep kernel", "`rpm -q`"),
        ("rpm -qi bash && rpm -qf /usr/bin/python3", "`rpm -q`"),
        ("rpm -q --qf '%{NAME}-%{VERSION}\\n' bash", "`rpm -q`"),
        ("rpm -qa --last | head", "`rpm -q`"),
        ("launchctl list | grep openclaw", "`launchctl list`"),
        ("launchctl print gui/501/ai.openclaw.gateway", "`launchctl print`"),
        ("firewall-cmd --state && firewall-cmd --get-active-zones", "`firewall-cmd`"),
        ("sudo firewall-cmd --zone public --list-all --permanent", "`firewall-cmd`"),
        ("firewall-cmd --query-service=ssh", "`firewall-cmd`"),
        ("openssl x509 -in cert.pem -noout -subject -dates", "`openssl x509`"),
        ("openssl req -in app.csr -noout -text", "`openssl req`"),
        ("openssl req -new -key app.key -subj /CN=app", "`openssl req`"),
        ("openssl rand -hex 32 && openssl version -a", "`openssl rand`, `openssl version`"),
        ("openssl dgst -sha256 release.tar.gz", "`openssl dgst`"),
        (
            "echo | openssl s_client -connect example.com:443 -servername example.com 2>/dev/null"
            " | openssl x509 -noout -enddate",
            "`openssl s_client`, `openssl x509`",
        ),
        ("openssl s_client -connect db:5432 -starttls postgres < /dev/null", "`openssl s_client`"),
    ],
)
def test_a_system_tool_in_its_query_mode_reads(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert verdict.read_only, verdict
    assert why in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("terraform plan", "`terraform plan` changes something or runs programs"),
        ("terraform apply -auto-approve", "`terraform apply`"),
        ("terraform init -upgrade", "`terraform init`"),
        ("terraform show -out=x", "`terraform show -out=x` writes a file"),
        ("terraform output -state-out=copy.tfstate", "writes a file"),
        ("terraform state rm aws_instance.web", "`terraform state rm` changes something"),
        ("terraform state push local.tfstate", "`terraform state push`"),
        ("terraform workspace select prod", "`terraform workspace select`"),
        ("terraform providers lock -platform=linux_amd64", "`terraform providers lock`"),
        ("terraform providers mirror ./mirror", "`terraform providers mirror`"),
        ("terraform fmt", "`terraform fmt` rewrites files"),
        ("terraform fmt -diff", "`terraform fmt` rewrites files"),
        ("terraform fmt -check -write=true", "`terraform fmt` rewrites files"),
        ("terraform -no-color show", "an option the grammar does not read"),
        ("terraform import aws_instance.web i-123", "`terraform import`"),
        ("terraform console", "`terraform console`"),
        ('terraform output "$NAME"', "known only when the shell runs"),
        ("terraform", "without a subcommand"),
        ("rpm -i pkg.rpm", "only `-q` reads"),
        ("rpm -Uvh pkg.rpm", "only `-q` reads"),
        ("rpm -e nginx", "only `-q` reads"),
        ("rpm -V nginx", "only `-q` reads"),  # runs the packages' %verifyscript
        ("rpm --import key.asc", "only `-q` reads"),
        ("rpm -iq nginx", "only `-q` reads"),  # the first option is the mode
        ("rpm -q --eval '%(id)'", "`rpm --eval` is no query option"),
        ("rpm -q --define 'x y' bash", "no query option"),
        ("rpm -qa --pipe 'sh -c x'", "no query option"),
        ("rpm -q --qf '%(rm -rf /)' bash", "a format that runs a macro"),
        ("rpm -q --queryformat='%{lua: os.execute(\"x\")}' bash", "a format that runs a macro"),
        ("launchctl load ~/Library/LaunchAgents/x.plist", "`launchctl load` manages services"),
        ("launchctl bootout gui/501/x", "`launchctl bootout`"),
        ("launchctl kickstart -k gui/501/x", "`launchctl kickstart`"),
        ("launchctl limit maxfiles 1024 unlimited", "`launchctl limit`"),
        ("launchctl setenv PATH /tmp", "`launchctl setenv`"),
        ("launchctl", "reads commands from its input"),
        ("firewall-cmd --add-service=http", "`firewall-cmd --add-service=http` changes the firewall"),
        ("firewall-cmd --permanent --add-port=80/tcp", "changes the firewall"),
        ("firewall-cmd --reload", "changes the firewall"),
        ("firewall-cmd --list-all --set-default-zone=trusted", "changes the firewall"),
        ("firewall-cmd --panic-on", "changes the firewall"),
        ("firewall-cmd --zone=public", "without a question"),
        ("openssl x509 -in c.pem -out c.der -outform DER", "`openssl x509 -out` writes a file or loads code"),
        ("openssl x509 --out=c.pem -in x", "writes a file or loads code"),
        ("openssl x509 -req -in c.csr -CA ca.pem -CAkey ca.key -CAcreateserial", "writes a file or loads code"),
        ("openssl req -new -newkey rsa:2048 -nodes -keyout k.pem", "writes a file or loads code"),
        ("openssl req -new -subj /CN=x", "without `-key` writes the key it makes"),
        ("openssl req -x509 -subj /CN=x -days 1", "without `-key`"),
        ("openssl x509 -engine pkcs11 -in c.pem -noout", "loads code"),
        ("openssl dgst -sha256 -config evil.cnf f", "loads code"),
        ("openssl rand -writerand ~/.rnd 16", "writes a file"),
        ("openssl genrsa -out k.pem 2048", "`openssl genrsa` is not a command the grammar reads"),
        ("openssl enc -aes-256-cbc -in a -out b", "`openssl enc`"),
        ("openssl ca -in c.csr", "`openssl ca`"),
        ("openssl s_client -connect h:443", "sends its standard input to the server"),
        ("printf 'POST /x HTTP/1.1\\r\\n\\r\\n' | openssl s_client -connect h:443", "sends its standard input"),
        ("echo 'DELETE /x' | openssl s_client -connect h:443", "sends its standard input"),
        ("openssl s_client -connect h:443 < request.txt", "sends its standard input"),
        ("echo | openssl s_client -connect h:443 -sess_out s.pem", "writes a file"),
        ("echo | openssl s_client -connect h:443 -keylogfile keys.txt", "writes a file"),
        ('openssl x509 -in "$CERT" -noout -text', "known only when the shell runs"),
        ("openssl", "reads commands from its input"),
    ],
)
def test_a_system_tool_that_changes_writes_or_runs_code_stays_mutating(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert not verdict.read_only, verdict
    assert why in verdict.reason, verdict.reason


def test_an_empty_standard_input_from_the_null_device_is_known() -> None:
    """`< /dev/null` gives a command no input at all, as an empty here-document would: a shell or
    an interpreter reading its program there runs nothing; any other file stays unknown."""
    for command in ("bash < /dev/null", "python3 < /dev/null", 'sh < "/dev/null"'):
        assert grammar_verdict(command).read_only, command
    for command in ("bash < /dev/zero", "bash < $NULL", "bash < /dev/null < script.sh", "python3 < job.py"):
        assert not grammar_verdict(command).read_only, command
