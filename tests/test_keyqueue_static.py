"""The Relabel key queue's browser code as files: linted by ESLint, inlined into one script for Streamlit.

ESLint (recommended rules, browser globals; pinned in tools/eslint/package-lock.json and installed by
``scripts/test.sh`` with ``npm ci``) must report nothing on ``empathy_app/static`` and the Node scripts beside
it. Skipped, with the reason, where Node or the ESLint install is absent.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from empathy_app import keyqueue

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
ESLINT = ROOT / "tools" / "eslint" / "node_modules" / "eslint" / "bin" / "eslint.js"
CONFIG = ROOT / "tools" / "eslint" / "eslint.config.mjs"
STATIC = ROOT / "empathy_app" / "static"
NODE_SCRIPTS = [ROOT / "tests" / "keyqueue_live.mjs", CONFIG]

needs_eslint = pytest.mark.skipif(
    NODE is None or not ESLINT.exists(),
    reason="needs Node.js and ESLint: `npm ci --prefix tools/eslint` (scripts/test.sh runs it when npm is installed)")


def eslint(*arguments: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([NODE, str(ESLINT), "--config", str(CONFIG.relative_to(ROOT)), "--max-warnings", "0",
                           *arguments], input=stdin, capture_output=True, text=True, timeout=300, cwd=ROOT,
                          check=False)


@needs_eslint
def test_eslint_reports_nothing_on_every_script():
    done = eslint("--format", "json", str(STATIC.relative_to(ROOT)),
                  *(str(p.relative_to(ROOT)) for p in NODE_SCRIPTS))
    results = json.loads(done.stdout)
    problems = [f"{Path(r['filePath']).relative_to(ROOT)}:{m['line']}:{m['column']} {m['message']} ({m['ruleId']})"
                for r in results for m in r["messages"]]
    assert (done.returncode, problems) == (0, []), done.stderr
    # every script was linted (none ignored by a pattern), each with the recommended rules
    linted = {Path(r["filePath"]) for r in results}
    assert linted == set(STATIC.rglob("*.js")) | set(NODE_SCRIPTS)
    assert len(linted) >= 4


@needs_eslint
@pytest.mark.parametrize(("where", "code", "rule"), [
    ("empathy_app/static/keyqueue/planted.js", "export function f() { return undefinedName; }\n", "no-undef"),
    ("empathy_app/static/keyqueue/planted.js", "export const f = () => process.exit(1);\n", "no-undef"),
    ("empathy_app/static/keyqueue/planted.js", "const unused = 1;\nexport default 2;\n", "no-unused-vars"),
    ("tests/planted.mjs", "export function f(x) { if (x = 1) return x; return window; }\n", "no-cond-assign"),
])
def test_a_planted_error_fails_the_lint(where, code, rule):
    # the code is linted as if it were that file (nothing is written): the config reaches the folder, with its
    # globals (no `process` in the browser, no `window` under Node)
    done = eslint("--format", "json", "--stdin", "--stdin-filename", where, stdin=code)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert rule in {m["ruleId"] for m in json.loads(done.stdout)[0]["messages"]}


def test_the_page_script_inlines_its_imports_and_refuses_any_other(tmp_path, monkeypatch):
    script = keyqueue._JS
    assert "import " not in "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("//"))
    assert (STATIC / "keyqueue" / "live_table.js").read_text(encoding="utf-8") in script
    assert script.startswith("// The Relabel page's decision queue")
    monkeypatch.setattr(keyqueue, "STATIC", tmp_path)
    (tmp_path / "a.js").write_text("export const a = 1;\n", encoding="utf-8")
    (tmp_path / "good.js").write_text("import {a} from './a.js';\nexport default a;\n", encoding="utf-8")
    assert keyqueue._script("good.js") == "export const a = 1;\nexport default a;\n"
    (tmp_path / "bad.js").write_text("import a from './a.js';\nexport default a;\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match=r"bad\.js: cannot inline \"import a from './a.js';\""):
        keyqueue._script("bad.js")
