"""Tests for the model catalogue (musetui.core.fingerprints.catalogue)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from musetui.core.fingerprints import catalogue as cat
from musetui.core.fingerprints.catalogue import (
    Catalogue,
    CatalogueEntry,
    CatalogueError,
    RouteEntry,
    builtin_catalogue,
    load_catalogue,
)
from musetui.core.model import HOSTS, PROVIDERS


@pytest.fixture
def builtin() -> Catalogue:
    return builtin_catalogue()


@pytest.mark.parametrize(
    ("model", "provider", "host", "family"),
    [
        # Muse catalogue (FINGERPRINTS.md §1.5)
        ("avocado-v7", "meta", None, "Avocado"),
        ("Avocado-2.1-preview", "meta", None, "Avocado"),
        ("muse-spark-1.2", "meta", None, "Muse Spark"),
        ("azure/avocado-compaction-v1", "meta", "azure", "Avocado (compaction)"),
        ("azure/avocado-memory-flush-v1", "meta", "azure", "Avocado (memory flush)"),
        ("azure/muse-special", "unknown", "azure", "muse-special"),
        ("azure/gpt-5.5", "openai", "azure", "GPT-5.5"),
        ("azure/gpt-5.6-sol", "openai", "azure", "GPT-5.6"),
        ("openai/gpt-5.6", "openai", None, "GPT-5.6"),
        ("codex/gpt-5.5", "openai", None, "GPT-5.5"),
        ("claude-opus-4-6", "anthropic", None, "Claude Opus 4.6"),
        ("claude-opus-4.7", "anthropic", None, "Claude Opus 4.7"),
        ("claude-opus-4-8-20261001", "anthropic", None, "Claude Opus 4.8"),
        ("claude-sonnet-4-6", "anthropic", None, "Claude Sonnet 4.6"),
        ("claude-haiku-4-5-20251001", "anthropic", None, "Claude Haiku 4.5"),
        ("kimi-k3", "moonshot", None, "Kimi K3"),
        ("accounts/fireworks/models/kimi-k3", "moonshot", "fireworks", "Kimi (Fireworks)"),
        ("accounts/fireworks/models/kimi-k2p6", "moonshot", "fireworks", "Kimi (Fireworks)"),
        ("meta/kimi-k3", "moonshot", None, "Kimi K3"),
        # other families
        ("claude-opus-5", "anthropic", None, "Claude Opus 5"),
        ("claude-sonnet-4-20250514", "anthropic", None, "Claude Sonnet"),
        ("claude-3-opus-20240229", "anthropic", None, "Claude 3"),
        ("anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic", "bedrock", "Claude (Bedrock)"),
        ("us.anthropic.claude-sonnet-4-20250514-v1:0", "anthropic", "bedrock", "Claude (Bedrock)"),
        ("kiro-claude-sonnet", "anthropic", "bedrock", "Claude (Kiro)"),
        ("gpt-5-mini-2025-08-07", "openai", None, "GPT-5"),
        ("gpt-5.3-codex", "openai", None, "GPT-5 Codex"),
        ("gpt-4.1-nano-2025-04-14", "openai", None, "GPT-4"),
        ("o3-mini", "openai", None, "o-series"),
        ("o4-mini-high", "openai", None, "o-series"),
        ("chatgpt-4o-latest", "openai", None, "ChatGPT"),
        ("codex-mini-latest", "openai", None, "Codex mini"),
        ("gemini-3-pro-preview", "google", None, "Gemini"),
        ("deepseek-reasoner", "deepseek", None, "DeepSeek"),
        ("grok-3-mini", "xai", None, "Grok"),
        ("mistral-small-latest", "mistral", None, "Mistral"),
        ("magistral-medium", "mistral", None, "Magistral"),
        ("codestral-latest", "mistral", None, "Codestral"),
        ("llama-3.3-70b-versatile", "meta", None, "Llama"),  # Groq is not derivable from the name
        ("groq/llama-3.3-70b-versatile", "groq", None, "Llama"),
        ("<synthetic>", "unknown", None, "synthetic"),
        # non-chat models a capture declares (traceloop/openllmetry, Arize openinference cassettes)
        ("text-embedding-3-large", "openai", None, "OpenAI embeddings"),
        ("text-embedding-ada-002", "openai", None, "OpenAI embeddings"),
        ("text-embedding-004", "google", None, "Google text embeddings"),
        ("davinci-002", "openai", None, "GPT base (completions)"),
        ("omni-moderation-latest", "openai", None, "Moderation"),
        ("facebook/opt-125m", "meta", None, "opt-125m"),
        ("openai.gpt-5.6-luna", "openai", "bedrock", "GPT (Bedrock)"),  # bedrock-mantle (pydantic-ai cassettes)
        ("openai-gpt-4.1", "openai", None, "GPT (Snowflake Cortex)"),
    ],
)
def test_builtin_lookup(builtin: Catalogue, model: str, provider: str, host: str | None, family: str) -> None:
    entry = builtin.lookup(model)
    assert entry is not None, model
    assert (entry.provider, entry.host, entry.family) == (provider, host, family)


def test_unknown_names(builtin: Catalogue) -> None:
    assert builtin.lookup("totally-unknown-model") is None
    assert builtin.lookup("") is None
    assert builtin.lookup("   ") is None
    other = builtin.lookup("azure/some-deployment")
    assert other is not None and (other.provider, other.host) == ("unknown", "azure")


def test_case_insensitive_and_first_match(builtin: Catalogue) -> None:
    assert builtin.lookup("CLAUDE-SONNET-4-6") == builtin.lookup("claude-sonnet-4-6")
    # the specific Muse entry wins over the generic claude-opus* one
    entry = builtin.lookup("claude-opus-4-6")
    assert entry is not None and entry.family == "Claude Opus 4.6"


@pytest.mark.parametrize(
    ("model", "hint", "provider", "host"),
    [
        ("gpt-5.3-codex", "azure", "openai", "azure"),  # Codex model_provider: azure
        ("gpt-5.3-codex", "openai", "openai", None),
        ("avocado-compaction-v1", "azure", "meta", "azure"),
        ("muse-spark-1.2", "meta", "meta", None),
        ("kimi-k3", "fireworks", "moonshot", "fireworks"),
        ("kimi-k3", "meta", "moonshot", None),
        ("gpt-5.5", "local", "openai", None),  # not a route: the hint is ignored
        ("azure/gpt-5.5", "openai", "openai", "azure"),  # the name's own route wins
        ("llama-3.3-70b-versatile", "groq", "groq", None),
    ],
)
def test_provider_hint(builtin: Catalogue, model: str, hint: str, provider: str, host: str | None) -> None:
    entry = builtin.lookup(model, provider_hint=hint)
    assert entry is not None
    assert (entry.provider, entry.host) == (provider, host)


def test_builtin_entries_are_valid_and_cover_every_provider(builtin: Catalogue) -> None:
    assert len(builtin) > 40
    providers = {e.provider for e in builtin}
    assert providers >= set(PROVIDERS) - {"groq"}  # groq comes from a route, not a name
    assert {r.provider for r in builtin.routes} >= {"groq"}
    for e in builtin:
        assert e.provider in PROVIDERS
        assert e.host is None or e.host in HOSTS
    for r in builtin.routes:
        assert r.prefix.endswith("/")


def test_builtin_is_cached_and_not_loaded_at_import() -> None:
    assert builtin_catalogue() is builtin_catalogue()
    assert cat.BUILTIN_PATH.is_file()
    text = Path(cat.__file__).read_text(encoding="utf-8")
    assert "@functools.cache" in text


def test_builtin_toml_parses_standalone() -> None:
    doc = tomllib.loads(cat.BUILTIN_PATH.read_text(encoding="utf-8"))
    assert set(doc) == {"model", "route", "endpoint", "header", "upstream"}


def test_http_capture_tables(builtin: Catalogue) -> None:
    azure = builtin.endpoint("Pydantic-AI-Realtime-Dev.openai.azure.com:443")
    assert azure is not None and azure.host == "azure" and azure.provider is None
    bedrock = builtin.endpoint("bedrock-runtime.eu-central-1.amazonaws.com")
    assert bedrock is not None and bedrock.host == "bedrock"
    agents = builtin.endpoint("bedrock-agent-runtime.us-east-1.amazonaws.com")
    assert agents is not None and (agents.host, agents.provider) == ("bedrock", None)
    assert builtin.endpoint("openrouter.ai").via == "openrouter"  # type: ignore[union-attr]
    assert builtin.endpoint("api.openai.com").provider == "openai"  # type: ignore[union-attr]
    assert builtin.endpoint("api.openai.com.evil.example") is None
    assert builtin.endpoint("localhost") is None
    hdr = builtin.header("X-Amzn-Bedrock-Input-Token-Count")
    assert hdr is not None and hdr.host == "bedrock"
    assert builtin.header("apim-request-id").host == "azure"  # type: ignore[union-attr]
    assert builtin.header("content-type") is None
    up = builtin.upstream("openrouter", "google")
    assert up is not None and up.host == "vertex"
    assert builtin.upstream("openrouter", "OpenAI").host is None  # type: ignore[union-attr]
    assert builtin.upstream("litellm", "Google") is None
    for e in (*builtin.endpoints, *builtin.headers, *builtin.upstreams):
        assert e.provider is None or e.provider in PROVIDERS
        assert e.host is None or e.host in HOSTS
        assert e.note or e.tag != "verified"


def test_user_file_extends_the_http_tables(tmp_path: Path) -> None:
    write(
        tmp_path,
        """
[[endpoint]]
match = "llm.internal.example"
host = "azure"
tag = "guess"
note = "our gateway in front of Azure"

[[header]]
match = "x-our-gateway"
via = "litellm"
""",
    )
    c = load_catalogue(tmp_path)
    assert c.endpoint("llm.internal.example").host == "azure"  # type: ignore[union-attr]
    assert c.header("X-Our-Gateway").via == "litellm"  # type: ignore[union-attr]
    assert c.endpoint("api.openai.com") is not None  # the built-in tables stay behind the user's
    write(tmp_path, '[[endpoint]]\nmatch = "x"\nhost = "nowhere"\n')
    with pytest.raises(CatalogueError, match="endpoint"):
        load_catalogue(tmp_path)


def write(dir_: Path, text: str) -> Path:
    dir_.mkdir(parents=True, exist_ok=True)
    path = dir_ / "catalogue.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_user_entries_take_precedence(tmp_path: Path) -> None:
    write(
        tmp_path,
        """
[[model]]
pattern = "avocado-experimental*"
provider = "openai"
host = "azure"
family = "Avocado on GPT (local override)"
note = "ours"

[[model]]
pattern = "my-local-model"
provider = "unknown"
family = "local"

[[route]]
prefix = "corp-gw/"
host = "azure"
fallback_provider = "unknown"
""",
    )
    catalogue = load_catalogue(tmp_path)
    exp = catalogue.lookup("avocado-experimental-2")
    assert exp is not None and (exp.provider, exp.host, exp.note) == ("openai", "azure", "ours")
    other = catalogue.lookup("avocado-v3")
    assert other is not None and other.provider == "meta"  # built-in still there
    local = catalogue.lookup("my-local-model")
    assert local is not None and local.family == "local"
    gw = catalogue.lookup("corp-gw/claude-sonnet-4-6")
    assert gw is not None and (gw.provider, gw.host) == ("anthropic", "azure")
    assert len(catalogue) == len(builtin_catalogue()) + 2


def test_missing_user_file_gives_builtin(tmp_path: Path) -> None:
    assert load_catalogue(tmp_path / "nope") is builtin_catalogue()


def test_env_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "cfg", '[[model]]\npattern = "zz-*"\nprovider = "xai"\nfamily = "ZZ"\n')
    monkeypatch.setenv("MUSETUI_CONFIG_DIR", str(tmp_path / "cfg"))
    assert cat.default_config_dir() == tmp_path / "cfg"
    entry = load_catalogue().lookup("zz-top")
    assert entry is not None and entry.provider == "xai"


def test_default_config_dir_uses_platformdirs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MUSETUI_CONFIG_DIR", raising=False)
    import platformdirs

    assert cat.default_config_dir() == Path(platformdirs.user_config_dir("musetui"))


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        (
            '[[model]]\npattern = "x*"\nprovider = "openia"\nfamily = "X"\n',
            ["[[model]] entry #1", "pattern 'x*'", "provider"],
        ),
        (
            '[[model]]\npattern = "a"\nprovider = "meta"\nfamily = "A"\n\n'
            '[[model]]\npattern = "b*"\nprovider = "meta"\nhost = "aws"\nfamily = "B"\n',
            ["entry #2", "pattern 'b*'", "host"],
        ),
        ('[[model]]\npattern = ""\nprovider = "meta"\nfamily = "A"\n', ["entry #1", "pattern"]),
        ('[[model]]\npattern = "a"\nprovider = "meta"\n', ["entry #1", "family"]),
        (
            '[[model]]\npattern = "a"\nprovider = "meta"\nfamily = "A"\ncolour = "red"\n',
            ["entry #1", "colour"],
        ),
        ('[[route]]\nprefix = "azure"\n', ["[[route]] entry #1", "prefix 'azure'"]),
        ("[[model]\nbroken", ["not valid TOML"]),
        ('[models]\npattern = "a"\n', ["unknown top-level key", "models"]),
        ('model = "x"\n', ["array of tables"]),
    ],
)
def test_bad_user_file_names_file_and_entry(tmp_path: Path, text: str, needles: list[str]) -> None:
    path = write(tmp_path, text)
    with pytest.raises(CatalogueError) as info:
        load_catalogue(tmp_path)
    message = str(info.value)
    assert str(path) in message
    for needle in needles:
        assert needle in message, message


def test_entry_models_are_strict() -> None:
    e = CatalogueEntry(pattern="a*", provider="meta", family="A")
    assert e.host is None and e.note == ""
    with pytest.raises(ValueError):
        CatalogueEntry(pattern="a*", provider="facebook", family="A")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RouteEntry(prefix="no-slash")
    r = RouteEntry(prefix="x/")
    assert r.fallback_provider == "unknown" and r.provider is None


def test_catalogue_without_routes() -> None:
    c = Catalogue([CatalogueEntry(pattern="foo-*", provider="google", family="Foo")])
    assert c.lookup("FOO-1") is not None
    assert c.lookup("azure/foo-1") is None
    assert c.lookup("foo-1", provider_hint="azure") is not None


def _names(c: Catalogue) -> list[str]:
    """Declared names that exercise every entry and route: patterns made concrete, routed, cased."""
    bodies = [e.pattern.replace("*", "x").replace("?", "y") for e in c.entries]
    names = bodies + [b.upper() for b in bodies] + ["", "  ", "nothing-known", "<synthetic>"]
    for r in c.routes:
        names += [r.prefix, r.prefix + "nothing-known"] + [r.prefix + b for b in bodies[::3]]
        names.append(r.prefix + c.routes[0].prefix + bodies[0])  # two routes deep
    return names


def _shown(entry: object) -> tuple[object, ...] | None:
    if entry is None:
        return None
    return tuple(getattr(entry, k) for k in ("pattern", "provider", "host", "family", "note"))


def test_scan_lookup_reads_the_builtin_file_as_pydantic_validates_it() -> None:
    """The scan's pydantic-free built-in tables equal the validated ones, and every lookup agrees."""
    from musetui.core.fingerprints import catalogue_lookup

    validated = builtin_catalogue()
    models, routes = catalogue_lookup.read_builtin_tables()
    assert [_shown(m) for m in models] == [_shown(e) for e in validated.entries]
    fields = ("prefix", "host", "provider", "fallback_provider", "note")
    assert [tuple(getattr(r, k) for k in fields) for r in routes] == [
        tuple(getattr(r, k) for k in fields) for r in validated.routes
    ]
    plain = catalogue_lookup.builtin_models()
    hints = [None, "azure", "openai", "bedrock", "unknown-hint", *(r.prefix.rstrip("/") for r in validated.routes)]
    names = _names(validated)
    assert len(names) > 300
    for name in names:
        for hint in hints:
            assert _shown(plain.lookup(name, hint)) == _shown(validated.lookup(name, hint)), (name, hint)


def test_scan_lookup_validates_a_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a user catalogue, the scan looks names up in the validated catalogue (user entries first)."""
    from musetui.core.fingerprints import catalogue_lookup

    monkeypatch.setenv("MUSETUI_CONFIG_DIR", str(tmp_path / "none"))
    assert catalogue_lookup.scan_lookup() == catalogue_lookup.builtin_models().lookup
    write(tmp_path / "cfg", '[[model]]\npattern = "avocado-v3"\nprovider = "xai"\nfamily = "ZZ"\n')
    monkeypatch.setenv("MUSETUI_CONFIG_DIR", str(tmp_path / "cfg"))
    entry = catalogue_lookup.scan_lookup()("avocado-v3")
    assert isinstance(entry, CatalogueEntry) and entry.provider == "xai"
    write(tmp_path / "cfg", '[[model]]\npattern = "zz-*"\nprovider = "facebook"\nfamily = "ZZ"\n')
    with pytest.raises(CatalogueError, match="provider"):
        catalogue_lookup.scan_lookup()
