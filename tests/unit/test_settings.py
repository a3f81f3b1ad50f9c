"""Settings: one pydantic model read from config.toml, then MUSETUI_* overrides, validated."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from musetui.core import settings
from musetui.core.errors import SettingsError

REPO = Path(__file__).resolve().parents[2]


def test_the_file_then_the_environment(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('theme = "textual-dark"\nworker_nice = 7\nno_cache = true\n')
    env = {"MUSETUI_CONFIG_DIR": str(tmp_path), "MUSETUI_WORKER_NICE": "3"}
    got = settings.load(env)
    assert (got.theme, got.worker_nice, got.no_cache) == ("textual-dark", 3, True)
    assert settings.load({"MUSETUI_CONFIG_DIR": str(tmp_path), "MUSETUI_NO_CACHE": "0"}).no_cache is False


def test_defaults_without_a_file(tmp_path: Path) -> None:
    got = settings.load({"MUSETUI_CONFIG_DIR": str(tmp_path)})
    assert got == settings.Settings()


@pytest.mark.parametrize(
    ("text", "env", "needle"),
    [
        ("worker_nice = 40\n", {}, "setting worker_nice (MUSETUI_WORKER_NICE)"),
        ("", {"MUSETUI_LIVE_INTERVAL": "soon"}, "setting live_interval (MUSETUI_LIVE_INTERVAL) from the environment"),
        ("colour = 'red'\n", {}, "setting colour"),
        ("theme = \n", {}, "config.toml"),
    ],
)
def test_a_bad_value_names_the_setting_and_its_source(
    tmp_path: Path, text: str, env: dict[str, str], needle: str
) -> None:
    (tmp_path / "config.toml").write_text(text)
    with pytest.raises(SettingsError) as caught:
        settings.load({"MUSETUI_CONFIG_DIR": str(tmp_path), **env})
    assert needle in str(caught.value)


def test_the_command_line_reports_a_bad_setting_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("max_file_bytes = 0\n")
    run = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--json", str(REPO / "sample_transcripts")],
        capture_output=True,
        text=True,
        env={
            "MUSETUI_CONFIG_DIR": str(tmp_path),
            "PATH": "/usr/bin:/bin",
            "MUSETUI_CACHE_DIR": str(tmp_path / "cache"),
        },
        check=False,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.startswith("musetui: setting max_file_bytes (MUSETUI_MAX_FILE_BYTES)")


def test_current_follows_a_changed_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MUSETUI_THEME", "nord")
    assert settings.current().theme == "nord"
    monkeypatch.setenv("MUSETUI_THEME", "gruvbox")
    assert settings.current().theme == "gruvbox"


def test_the_docs_list_every_setting() -> None:
    doc = (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
    for name in settings.NAMES:
        assert f"`{name}`" in doc and f"`MUSETUI_{name.upper()}`" in doc, name


_PLAIN_NAMES = ("cache_dir", "no_cache", "theme", "no_pyperclip", "debug")


@given(
    st.dictionaries(
        st.sampled_from(_PLAIN_NAMES),
        st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from(["\udcff", "\x00"])),
    )
)
def test_plain_environment_values_need_no_pydantic_and_agree_with_it(overrides: dict[str, str]) -> None:
    """A flag, a text or a path from the environment: the settings pydantic makes of it, made without it."""
    env = {
        "MUSETUI_CONFIG_DIR": "/nonexistent/musetui-test",
        **{"MUSETUI_" + k.upper(): v for k, v in overrides.items()},
    }
    got = settings.load(env)
    read = {name: settings._env_value(name, v) for name, v in overrides.items()}
    assert got == (settings._validate(read, "env") if read else settings.Settings())
    assert set(settings._TOTAL) == set(_PLAIN_NAMES)  # (a new plain setting is added here, and so tested)


def test_a_cache_dir_from_the_environment_imports_no_pydantic(tmp_path: Path) -> None:
    code = (
        "import sys; from musetui.core import settings; "
        f"s = settings.load({{'MUSETUI_CONFIG_DIR': {str(tmp_path)!r}, 'MUSETUI_CACHE_DIR': '/x', 'MUSETUI_DEBUG': '1'}}); "
        "print(s.cache_dir, s.debug, 'pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert out.split() == ["/x", "True", "False"]
    # a constrained setting still goes through pydantic, and its error names the setting
    with pytest.raises(SettingsError, match="worker_nice"):
        settings.load({"MUSETUI_CONFIG_DIR": str(tmp_path), "MUSETUI_CACHE_DIR": "/x", "MUSETUI_WORKER_NICE": "40"})
