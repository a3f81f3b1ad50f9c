"""The host step of a verdict: the cloud that served the model (azure, bedrock, vertex, …), or none.

Only host evidence decides a host (an endpoint, a cloud's own keys, headers and ids, a format
only one cloud serves); a declared route gives the host marked "declared". Host evidence that
names no other maker raises the verdict's confidence (see ``scan --explain``, part 5).
"""

from __future__ import annotations

from typing import Any

from musetui.core.model import Evidence

#: Host evidence that names no other maker raises the verdict's confidence by this share of
#: the host's own confidence: 1 - (1 - c) * (1 - HOST_AGREEMENT * host_confidence).
HOST_AGREEMENT = 0.5
#: Formats that only one cloud serves: the format itself is host evidence.
FORMAT_HOSTS = {
    "bedrock-converse": (
        "bedrock",
        "the Converse format (output.message, stopReason, metrics.latencyMs) is Amazon Bedrock's own API",
    ),
}

#: Host evidence that a look-alike also writes, so it names its host only beside these makers'
#: own stack: ``content_filters: null`` is on Azure OpenAI's Responses objects, and on DeepSeek's
#: own Responses API too (pydantic-ai and ruby_llm cassettes of api.deepseek.com).
HOST_ONLY_BESIDE: dict[str, frozenset[str]] = {
    "content_filters:null": frozenset({"openai"}),
}


def add_format_host(fmt: str, evidence: list[Evidence], facts: dict[str, Any]) -> None:
    """A format only one cloud serves is host evidence by itself."""
    host_name, why = FORMAT_HOSTS[fmt]
    facts["hosts"][host_name] = max(facts["hosts"].get(host_name, 0.0), 1.0)
    facts["host_scores"][host_name] = 1.0 - (1.0 - facts["host_scores"].get(host_name, 0.0)) * 0.5
    evidence.append(Evidence("format", None, host_name, 1.0, 1, "", fmt, why, tag="source"))
    evidence.sort(key=lambda e: (-e.weight, e.line))


def pick_host(
    facts: dict[str, Any], provider: str, conf: float, d_host: str | None, notes: list[str]
) -> tuple[str | None, str, float]:
    """The host from host evidence, else from the declaration; its note; the confidence it raises.

    The note is returned, not added: it follows the flags' notes.
    """
    host: str | None = None
    host_note = ""
    ev_hosts: dict[str, float] = facts["hosts"]
    beside: dict[str, frozenset[str]] = facts["host_only_beside"]
    if beside and any(provider not in beside.get(h, (provider,)) for h in ev_hosts):
        dropped = sorted(h for h in ev_hosts if provider not in beside.get(h, (provider,)))
        notes.append(
            f"host {', '.join(dropped)}: its only evidence is also written by look-alikes, "
            f"and counts only beside {', '.join(sorted(set().union(*(beside[h] for h in dropped))))}'s own stack"
        )
        ev_hosts = {h: w for h, w in ev_hosts.items() if h not in dropped}
    if ev_hosts and facts["first_party"]:
        notes.append(
            f"the request went to {', '.join(sorted(set(facts['first_party'])))}, a maker's own API: "
            f"body keys shaped like a cloud's ({', '.join(sorted(ev_hosts))}) do not make it one"
        )
        ev_hosts = {}
    if ev_hosts:
        host = max(ev_hosts.items(), key=lambda kv: kv[1])[0]
        host_conf = facts["host_scores"].get(host, 0.0)  # from evidence that shows the host and no maker
        host_note = f"host {host} ({max(host_conf, ev_hosts[host]):.2f}) from host-only evidence"
        makers: set[str] = facts["host_makers"].get(host, set())
        if provider != "unknown" and not makers - {provider} and host_conf > 0:
            # The host's own evidence names no other maker: it confirms where the provider's model ran.
            raised = 1.0 - (1.0 - conf) * (1.0 - HOST_AGREEMENT * host_conf)
            host_note += f", which agrees with {provider}: confidence {conf:.2f} -> {min(raised, 0.99):.2f}"
            conf = raised
    elif d_host and provider != "unknown":
        host = d_host
        host_note = f"host {host} (declared)"
    return host, host_note, conf
