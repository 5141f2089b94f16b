"""Tool-name verbs, the last evidence before "unknown ⇒ mutating": the read lookups the issue lists
(τ² `get_order_details`, `check_room_availability`, `search_products`, Spanish
`identificar_paciente`) are read-only with the verb named; a corpus of real write tools — τ-bench,
τ²-bench, the bundled helpdesk pack, the tools the issue says `init` suggested as safe — stays
mutating, every one, whatever else their name holds."""

from __future__ import annotations

import pytest

from replaylab.safety import ToolClassifier
from replaylab.safety.verbs import action_verdict, name_words, verb_verdict

READ_TOOLS = [
    ("get_order_details", "`get`"),
    ("get_reservation_details", "`get`"),
    ("check_room_availability", "`check`"),
    ("search_products", "`search`"),
    ("search_direct_flight", "`search`"),
    ("find_user_id_by_name_zip", "`find`"),
    ("list_all_airports", "`list`"),
    ("lookup_customer", "`lookup`"),
    ("fetch_invoice", "`fetch`"),
    ("show_balance", "`show`"),
    ("view_cart", "`view`"),
    ("describe_instance", "`describe`"),
    ("count_open_tickets", "`count`"),
    ("verify_identity", "`verify`"),
    ("validate_coupon", "`validate`"),
    ("read_file", "`read`"),
    ("getUserById", "`get`"),
    ("mcp__github__get_issue", "`get`"),
    ("identificar_paciente", "the Spanish verb `identificar`"),
    ("obtener_cita", "the Spanish verb `obtener`"),
    ("buscar_medico", "the Spanish verb `buscar`"),
    ("listar_horarios", "the Spanish verb `listar`"),
    ("consultar_saldo", "the Spanish verb `consultar`"),
    ("verificar_disponibilidad", "the Spanish verb `verificar`"),
    ("rechercher_vol", "the French verb `rechercher`"),
    # `merge` and `commit` are nouns after a verb (GitLab's and GitHub's MCP servers)
    ("mcp__gitlab__get_merge_request", "`get`"),
    ("mcp__github__get_commit", "`get`"),
    ("issue_read", "after `issue`, is `read`"),
    # a runner limited to reads, as servers that split one tool by effect name it (Supabase)
    ("mcp__supabase__execute_sql_read", "a runner limited to reads"),
    # an OpenAPI-generated name: the HTTP method is how it is sent (Notion's `API-post-search`)
    ("API-post-search", "is `search`"),
    # a one-word name that is a read-only command (Sentry's `whoami`)
    ("whoami", "the command `whoami`"),
    # verbs of a report over data (surge-ai/tau-bench's corecraft tools read `data` alone)
    ("aggregate_by_field", "`aggregate`"),
    ("summarize_orders", "`summarize`"),
    # OpenClaw names an MCP server's tool `<server>__<tool>` (agent-bundle-mcp-names.ts)
    ("github__list_issues", "`list`"),
    ("linear-2__get_issue", "`get`"),
    # the service first, its verb second, as MCP servers name their tools
    ("slack_list_channels", "after `slack`, is `list`"),
    ("slack__slack_get_channel_history", "after `slack`, is `get`"),
    ("memory_search", "after `memory`, is `search`"),
    ("notion__notion_retrieve_page", "after `notion`, is `retrieve`"),
    ("calendarListEvents", "after `calendar`, is `list`"),
    ("paciente_buscar", "the Spanish verb `buscar`"),
    # qualifiers between the service and its verb, as search servers name their tools
    ("mcp__brave-search__brave_web_search", "after `brave web`, is `search`"),
    ("google_web_search", "after `google web`, is `search`"),
    # a verb that changes something, with an object that makes it a look-up
    ("mcp__context7__resolve-library-id", "`resolve` with `id`"),
    ("mcp__browser__take_screenshot", "`take` with `screenshot`"),
    ("mcp__browser__page_wait_for", "only waits"),
    # a name that is a command line, read by the read-only shell grammar
    ("mcp__git__git_status", "the command `git status`"),
    ("git__git_diff_unstaged", "the command `git diff unstaged`"),
    ("mcp__git__git_log", "the command `git log`"),
    ("docker_ps", "the command `docker ps`"),
    ("gh_pr_view", "the command `gh pr view`"),
]

#: real write tools (τ-bench / τ²-bench airline, retail, telecom; helpdesk; the issue's list)
WRITE_TOOLS = [
    "book_reservation", "cancel_reservation", "update_reservation_flights", "update_reservation_baggages",
    "update_reservation_passengers", "send_certificate", "cancel_pending_order", "exchange_delivered_order_items",
    "modify_pending_order_address", "modify_pending_order_items", "modify_pending_order_payment",
    "modify_user_address", "return_delivered_order_items", "toggle_airplane_mode", "toggle_data",
    "toggle_roaming", "toggle_wifi", "toggle_wifi_calling", "toggle_data_saver_mode", "reset_apn_settings",
    "set_apn_settings", "set_network_mode_preference", "reboot_device", "reseat_sim_card", "refuel_data",
    "resume_line", "suspend_line", "make_payment", "send_payment_request", "grant_app_permission",
    "enable_roaming", "disable_roaming", "connect_vpn", "disconnect_vpn", "transfer_to_human_agents",
    "issue_refund", "cancel_order", "send_email", "create_ticket", "escalate_ticket", "update_address",
    "ticket_note", "create_reservation", "create_order", "register_order", "get_or_create_user",
    "check_in_passenger", "fetch_and_store_report", "lookup_and_charge", "agendar_cita", "cancelar_cita",
    "crear_paciente", "registrar_pago", "identificar_y_pagar", "TodoWrite",
    # MCP tools as OpenClaw and the servers name them: the service first, a change after it
    "github__create_issue", "slack__slack_post_message", "stripe__create_refund", "slack_post_message",
    "gmail_send_email", "passenger_check_in", "jira_update_issue", "http_post", "playwright__browser_click",
    "playwright__browser_navigate", "calendar_delete_event", "git__git_commit", "fix_list_items",
    # MCP servers' writes, the git server's among them: a command the grammar does not prove reads
    "mcp__git__git_checkout", "mcp__git__git_fetch", "git_pull", "mcp__git__git_reset", "mcp__git__git_add",
    "mcp__git__git_create_branch", "docker_run", "kubectl_apply", "npm_install", "mcp__filesystem__write_file",
    "mcp__memory__create_entities", "mcp__serena__replace_symbol_body", "mcp__playwright__browser_type",
    "mcp__supabase__execute_sql", "resolve_ticket", "resolve_incident", "take_snapshot", "take_payment",
    "ask_and_pay", "web_search_and_book", "think_and_send", "brave_web_post",
    # merges and commits where a verb stands; a runner of writes; a POST that makes a page;
    # Sentry's analysis that starts an autofix run (annotated readOnlyHint: false)
    "mcp__github__merge_pull_request", "squash_and_merge", "pr_merge", "auto_commit_changes",
    "mcp__supabase__execute_sql_write", "API-post-page", "issue_card", "mcp__sentry__analyze_issue_with_seer",
]  # fmt: skip


@pytest.mark.parametrize(("name", "why"), READ_TOOLS)
def test_a_read_verb_first_makes_a_tool_read_only(name: str, why: str) -> None:
    verdict = verb_verdict(name)
    assert verdict.read_only and why in verdict.reason, verdict
    classified = ToolClassifier().explain(name, {"id": "x"})
    assert (classified.tool_class, classified.rule) == ("read", "tool-name-verb")
    assert why in classified.reason


@pytest.mark.parametrize("name", WRITE_TOOLS)
def test_no_write_tool_of_the_corpus_reads_by_its_name(name: str) -> None:
    assert not verb_verdict(name).read_only, verb_verdict(name)
    if name != "TodoWrite":  # Claude Code documents it: the session's own todo list (agent-builtin)
        assert ToolClassifier().explain(name, {}).mutating


def test_a_declared_class_or_an_openclaw_rule_outranks_the_verb() -> None:
    assert ToolClassifier(declared={"get_and_bill": "write", "get_x": "write"}).explain("get_x", {}).mutating
    assert ToolClassifier().explain("get_send_status", {}).rule == "openclaw-name"  # `send` in the name
    assert ToolClassifier().explain("message_get", {}).mutating


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("mcp__github__getIssue", ["get", "issue"]),
        ("github__getIssue", ["get", "issue"]),
        ("my_server-2__list_x", ["list", "x"]),
        ("functions.search_web", ["search", "web"]),
        ("HTTPGetJSON", ["http", "get", "json"]),
        ("list-all.items", ["list", "all", "items"]),
        ("   ", []),
    ],
)
def test_names_split_into_words(name: str, words: list[str]) -> None:
    assert name_words(name) == words


def test_nouns_that_are_also_verbs_change_something_only_where_a_verb_stands() -> None:
    assert verb_verdict("get_order_details").read_only and verb_verdict("get_booking").read_only
    assert not verb_verdict("order_pizza").read_only and not verb_verdict("book_room").read_only
    assert not verb_verdict("find_and_book_room").read_only  # after `and`, a verb stands again
    assert not verb_verdict("").read_only and not verb_verdict("frobnicate").read_only


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("is_refund_allowed", "starts with `is`"),
        ("can_cancel_order", "starts with `can`"),
        ("has_pending_update", "starts with `has`"),
        ("should_escalate_ticket", "starts with `should`"),
        ("user_is_deleted", "after `user`, is `is`"),
        ("billing_can_refund", "after `billing`, is `can`"),
    ],
)
def test_a_name_that_asks_a_question_reads_whatever_verbs_it_asks_about(name: str, where: str) -> None:
    """`can_cancel_order` asks whether an order can be cancelled; it cancels nothing."""
    classified = ToolClassifier().explain(name, {"order_id": "1"})
    assert (classified.tool_class, classified.rule) == ("read", "tool-name-verb"), classified
    assert where in classified.reason and "asks a question" in classified.reason


def test_a_question_joined_to_a_change_or_after_one_does_not_read() -> None:
    # a connector joins a second verb, which is done; a change verb before the question decides
    for name in ("is_paid_and_refund", "check_can_cancel", "cancel_if_is_late", "set_is_active"):
        assert not verb_verdict(name).read_only, verb_verdict(name)
    # OpenClaw's rule outranks the name: a name holding `send` mutates, even as a question
    assert ToolClassifier().explain("can_send_mms", {}).rule == "openclaw-name"


@pytest.mark.parametrize(("name", "verb"), [("searchjobs", "search"), ("getweather", "get"), ("listfiles", "list"), ("getusers", "get")])  # fmt: skip
def test_a_read_verb_glued_to_its_object_reads(name: str, verb: str) -> None:
    """Datasets spell tools without separators (`searchjobs` beside `search_jobs`)."""
    classified = ToolClassifier().explain(name, {"q": "x"})
    assert (classified.tool_class, classified.rule) == ("read", "tool-name-verb"), classified
    assert f"`{verb}` glued to" in classified.reason


def test_a_read_verb_glued_to_a_change_or_a_particle_does_not_read() -> None:
    for name in ("searchreplace", "getorcreate", "getandset", "retrieveandsave", "getupdates", "checkout", "getset"):
        assert not verb_verdict(name).read_only, verb_verdict(name)
    assert not verb_verdict("readme").read_only  # too short an object to be one


def test_a_first_word_no_table_knows_as_a_verb_names_the_service_and_the_verb_follows() -> None:
    # a noun first, then no read verb: still unknown
    assert not verb_verdict("ticket_note").read_only and not verb_verdict("user_profile").read_only
    # a verb first stays the verb, whatever follows: `fix` is one, `list` after it is not the verb
    assert not verb_verdict("fix_list_items").read_only and "`fix`" in verb_verdict("fix_list_items").reason
    # the second word in verb position: a noun-verb there changes (`slack_post_message`), a noun
    # after the verb does not (`slack_list_posts`)
    assert verb_verdict("slack_list_posts").read_only and not verb_verdict("slack_post_message").read_only


@pytest.mark.parametrize(
    ("name", "tool_class", "why"),
    [
        ("think", "think", "starts with `think`, a verb that only thinks"),
        ("mcp__sequential-thinking__sequentialthinking", "think", "`sequentialthinking`, a verb that only thinks"),
        ("mcp__serena__think_about_collected_information", "think", "only thinks"),
        ("mcp__deepwiki__ask_question", "interaction", "asks a question"),
        ("perplexity_ask", "interaction", "after `perplexity`, is `ask`"),
    ],
)
def test_a_verb_that_changes_nothing_gives_its_own_safe_class(name: str, tool_class: str, why: str) -> None:
    classified = ToolClassifier().explain(name, {"thought": "x"})
    assert (classified.tool_class, classified.rule, classified.mutating) == (tool_class, "tool-name-verb", False)
    assert why in classified.reason, classified.reason


def test_a_name_that_is_a_command_is_read_as_that_command_not_as_its_words() -> None:
    """`git_fetch` holds the read verb `fetch`, but `git fetch` updates the repository's refs: the
    grammar decides, not the word; `git_log` holds `log`, a verb elsewhere, but `git log` reads."""
    assert not verb_verdict("git_fetch").read_only and "`git fetch`" in verb_verdict("git_fetch").reason
    assert verb_verdict("git_log").read_only
    assert verb_verdict("fetch_invoice").read_only and not verb_verdict("log_event").read_only


def test_an_action_reads_as_a_name_would_or_as_one_of_openclaws_read_only_actions() -> None:
    """A tool of many actions (`calendar` with `action: list_events`): OpenClaw's read-only
    actions (`status`, `poll`, `runs`) and an action whose verb only reads are reads; an action
    that changes something, or holds no verb, is not."""
    assert action_verdict("status").read_only and action_verdict("runs").read_only
    assert action_verdict("list_events").read_only and "`list`" in action_verdict("list_events").reason
    for change in ("create_event", "refund", "close", "check_in"):
        assert not action_verdict(change).read_only and action_verdict(change).changes, change
    assert not action_verdict("sync_now").read_only
    assert not action_verdict("frobnicate").read_only and not action_verdict("frobnicate").changes


@pytest.mark.parametrize(
    "name",
    [
        "HassMediaSearchAndPlay",  # Home Assistant: searches, then plays the first result
        "mcp__homeassistant__HassListCompleteItem",  # `List` is the to-do list domain: completes an item
        "HassShoppingListCompleteItem",
        "search_and_play_media",
        "get_and_lock_record",
    ],
)
def test_a_read_verb_joined_to_another_verb_or_a_list_domain_noun_changes(name: str) -> None:
    verdict = verb_verdict(name)
    assert not verdict.read_only and verdict.changes


@pytest.mark.parametrize("name", ["fetch_and_summarize", "search_and_compare", "find_user_id_by_name_and_zip"])
def test_a_read_verb_joined_to_another_read_verb_or_a_noun_reads(name: str) -> None:
    assert verb_verdict(name).read_only
