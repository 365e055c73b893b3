"""Sphinx extension of birkhoff's site: pages generated from the code so they cannot drift.

- ``birkhoff-options KIND``: a table of a solver's options (name, default, help, choices) from
  the engine's one description of them (birkhoff/core/describe.hpp), the same the CLI flags
  and Python keywords are made from.
- ``birkhoff-cli``: every subcommand's ``--help``, run from the installed ``birkhoff`` command.
- ``birkhoff-benchmark NAME``: the plot and table of bench/results/NAME.json.
- The C++ reference: one page per folder of include/birkhoff, written when the build starts,
  with each header's documented declarations (its ``///`` comments) and its source.
- ``small_argv``: the arguments that run each gallery example at a small size.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import textwrap

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

DOCS = pathlib.Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
GENERATED = DOCS / "api" / "cpp"
PLOTS = DOCS / "benchmarks" / "plots"

# Gallery examples at a small size: the docs build runs each one (docs/conf.py).
SMALL_ARGS = {
    "align_douban.py": ["--max-iter", "100"],
    "align_planted.py": ["--n", "120", "--points", "4", "--rhos", "0.7", "0.99"],
    "barycenter_shapes.py": ["--points", "150", "--grid", "3"],
    "coarsen_gnn.py": ["--ratios", "0.1", "0.5", "--epochs", "40", "--seeds", "1"],
    "color_transfer.py": ["--size", "40"],
    "partial_fusion.py": ["--pairs", "1"],
    "torch_generator.py": ["--iterations", "60", "--batch", "300"],
    "torch_gradient_flow.py": ["--n", "1000", "--steps", "10"],
    "torch_newton_registration.py": ["--n", "300", "--max-gd", "40"],
}


def small_argv(gallery_conf, script_vars):
    """sphinx-gallery's reset_argv: small sizes, and figures written outside the checkout."""
    name = pathlib.Path(script_vars["src_file"]).name
    out = pathlib.Path(os.environ.get("BIRKHOFF_DOCS_OUT", DOCS / "_build" / "gallery_out"))
    out.mkdir(parents=True, exist_ok=True)
    png = out.resolve() / (pathlib.Path(name).stem + ".png")
    # The example runs in its own folder: the path is relative to it (no machine path printed).
    source_dir = pathlib.Path(script_vars["src_file"]).resolve().parent
    return [*SMALL_ARGS.get(name, []), "--output", os.path.relpath(png, source_dir)]


def _parse(directive, lines):
    """Parses generated Markdown lines (the pages are MyST) into nodes at the directive's place."""
    node = nodes.section()
    node.document = directive.state.document
    nested_parse_with_titles(directive.state, StringList(lines, "birkhoff_docs"), node)
    return node.children


def _cell(text):
    return str(text).replace("\n", " ").replace("|", "\\|") or " "


def _table(header, rows):
    """A Markdown pipe table."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out + [""]


class OptionsDirective(SphinxDirective):
    """``birkhoff-options sinkhorn``: the described options of one solver as a table."""

    required_arguments = 1

    def run(self):
        """The table's nodes."""
        from birkhoff import _birkhoff

        kind = self.arguments[0]
        describe = getattr(_birkhoff, f"describe_{kind}_options", None)
        if describe is None:
            raise self.error(f"birkhoff-options: no description of '{kind}' options")
        rows = []
        for f in describe():
            default = f["default"]
            default = "None" if default is None else repr(default)
            help_text = f["help"]
            if f["choices"]:
                help_text += "; one of " + ", ".join(f"`{c}`" for c in f["choices"])
            if f["alias"]:
                help_text += f" (CLI also `{f['alias']}`)"
            rows.append([f"`{f['name']}`", f"`{default}`", help_text])
        lines = _table(["option", "default", "meaning"], rows)
        return _parse(self, lines)


def _cli():
    exe = os.environ.get("BIRKHOFF_CLI") or shutil.which("birkhoff")
    if exe is None:
        raise RuntimeError("birkhoff-cli: the birkhoff command is not on PATH (pip install .)")
    return exe


def _help(exe, *args, width=100):
    """The --help text, long lines wrapped under their description column."""
    run = subprocess.run([exe, *args, "--help"], capture_output=True, text=True, check=True)
    out = []
    for line in run.stdout.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        m = re.match(r"^(\s+\S.*?\s{2,})\S", line)
        indent = " " * (len(m.group(1)) if m and len(m.group(1)) < 40 else 2)
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False)
    return "\n".join(out)


def subcommands(exe=None):
    """The subcommands that ``birkhoff --help`` lists, in its order."""
    text = _help(exe or _cli(), width=10**9)
    names, listing = [], False
    for line in text.splitlines():
        if line.strip().upper().startswith("SUBCOMMANDS"):
            listing = True
            continue
        if listing:
            m = re.match(r"^\s+([a-z][a-z0-9-]*)\s", line + " ")
            if m:
                names.append(m.group(1))
            elif line.strip() and not line.startswith(" "):
                listing = False
    return names


class CliDirective(SphinxDirective):
    """``birkhoff-cli``: ``birkhoff --help`` and each subcommand's, as sections."""

    def run(self):
        """The sections' nodes."""
        exe = _cli()
        lines = ["## Usage", "", "```text", *_help(exe).splitlines(), "```", ""]
        for name in subcommands(exe):
            lines += [f"## birkhoff {name}", "", "```text", *_help(exe, name).splitlines()]
            lines += ["```", ""]
        return _parse(self, lines)


# ---- references ---------------------------------------------------------------------------

_CITATION = re.compile(r"\[([A-Za-z]+[0-9]{4}[A-Za-z0-9]*)\]")


def bibliography():
    """docs/references.bib as {key: {field: value}} (the fields of our entries only)."""
    text = (DOCS / "references.bib").read_text()
    entries = {}
    for m in re.finditer(r"@(\w+)\s*\{\s*([^,\s]+)\s*,", text):
        key, i, depth, body = m.group(2), m.end(), 1, []
        while i < len(text) and depth:
            depth += (text[i] == "{") - (text[i] == "}")
            body.append(text[i])
            i += 1
        fields = {}
        for f in re.finditer(r"(\w+)\s*=\s*\{((?:[^{}]|\{[^{}]*\})*)\}", "".join(body)):
            fields[f.group(1).lower()] = re.sub(r"[{}]", "", f.group(2))
        entries[key] = fields
    return entries


def _reference_text(fields):
    venue = fields.get("booktitle") or fields.get("journal") or fields.get("note") or ""
    parts = [fields.get("author", ""), f"({fields.get('year', '')})", fields.get("title", "")]
    text = ". ".join(p for p in (" ".join(parts[:2]), parts[2], venue) if p.strip())
    return text + "."


class ReferencesDirective(SphinxDirective):
    """``birkhoff-references``: every entry of docs/references.bib, each with its key's anchor."""

    def run(self):
        """One paragraph per entry."""
        self.env.note_dependency(str(DOCS / "references.bib"))
        out = []
        for key, fields in sorted(bibliography().items()):
            para = nodes.paragraph(ids=[key])
            para += nodes.strong(text=f"[{key}] ")
            para += nodes.Text(_reference_text(fields))
            if "url" in fields:
                para += nodes.Text(" ")
                para += nodes.reference(refuri=fields["url"], text=fields["url"])
            out.append(para)
        return out


def link_citations(app, doctree, docname):
    """doctree-resolved: each [key] of docs/references.bib in the text links to its entry."""
    keys = set(bibliography())
    target = app.builder.get_relative_uri(docname, "references")
    for text in list(doctree.findall(nodes.Text)):
        parent = text.parent
        if parent is None or isinstance(parent, (nodes.literal, nodes.literal_block, nodes.strong)):
            continue
        pieces = _CITATION.split(str(text))
        if len(pieces) == 1 or not any(k in keys for k in pieces[1::2]):
            continue
        new = []
        for i, piece in enumerate(pieces):
            if i % 2 == 0:
                if piece:
                    new.append(nodes.Text(piece))
            elif piece in keys:
                new.append(nodes.reference(refuri=f"{target}#{piece}", text=f"[{piece}]"))
            else:
                new.append(nodes.Text(f"[{piece}]"))
        parent.replace(text, new)


# ---- benchmarks ---------------------------------------------------------------------------


def _load_results(name):
    path = ROOT / "bench" / "results" / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"birkhoff-benchmark: {path.relative_to(ROOT)} is missing")
    return json.loads(path.read_text())


def _groups(results):
    keys = results.get("group", [])
    out = {}
    for row in results["rows"]:
        out.setdefault(tuple(row.get(k) for k in keys), []).append(row)
    return keys, out


def plot_results(name, results):
    """Writes benchmarks/plots/NAME.png: time against size per method and group, and ratios."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x, times = results["x"], results["times"]
    ours = next(iter(times))
    keys, groups = _groups(results)
    fig, (ax_t, ax_r) = plt.subplots(1, 2, figsize=(10, 3.8))
    for group, rows in groups.items():
        rows = sorted(rows, key=lambda r: r[x])
        label = ", ".join(f"{k}={v}" for k, v in zip(keys, group))
        xs = [r[x] for r in rows]
        for method, column in times.items():
            pts = [(a, r[column]) for a, r in zip(xs, rows) if r.get(column) is not None]
            if pts:
                ax_t.plot(*zip(*pts), marker="o", label=f"{method} {label}".strip())
        for method, column in list(times.items())[1:]:
            pts = [
                (a, r[column] / r[times[ours]])
                for a, r in zip(xs, rows)
                if r.get(column) is not None and r.get(times[ours])
            ]
            if pts:
                ax_r.plot(*zip(*pts), marker="o", label=f"{method}/{ours} {label}".strip())
    for ax in (ax_t, ax_r):
        ax.set_xscale("log")
        ax.set_xlabel(results.get("x_label", x))
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:  # a single-method result has no ratios
            ax.legend(fontsize=6, framealpha=0.6)
    ax_t.set_yscale("log")
    ax_t.set_ylabel("seconds")
    ax_r.set_ylabel(f"time / {ours}'s")
    ax_r.axhline(1.0, color="grey", lw=0.8)
    fig.suptitle(results.get("title", name), fontsize=10)
    fig.tight_layout()
    PLOTS.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOTS / f"{name}.png", dpi=110)
    plt.close(fig)


class BenchmarkDirective(SphinxDirective):
    """``birkhoff-benchmark NAME``: the plot, the run's machine and the table of a result."""

    required_arguments = 1

    def run(self):
        """The image, the machine line and the table."""
        name = self.arguments[0]
        results = _load_results(name)
        self.env.note_dependency(str(ROOT / "bench" / "results" / f"{name}.json"))
        plot_results(name, results)
        machine = results.get("machine", {})
        versions = ", ".join(f"{k} {v}" for k, v in results.get("versions", {}).items())
        rows = results["rows"]
        columns = list(rows[0].keys()) if rows else []
        lines = [
            f"```{{image}} /benchmarks/plots/{name}.png",
            f":alt: {results.get('title', name)}",
            "```",
            "",
            f"Run on {results.get('date', '?')}: {machine.get('cpu', '?')}, "
            f"{machine.get('cores', '?')} cores, {machine.get('memory_gb', '?')} GiB; "
            f"{versions}. Command: `{results.get('command', '?')}`. The `load` column is "
            "the machine's 1-minute load average when the row was measured.",
            "",
        ]
        cells = [
            [f"{row.get(c):.4g}" if isinstance(row.get(c), float) else row.get(c) for c in columns]
            for row in rows
        ]
        lines += _table([f"`{c}`" for c in columns], cells)
        return _parse(self, lines)


# ---- C++ reference ------------------------------------------------------------------------

_DECL_END = re.compile(r"[{;]")


def _header_entries(text):
    """(doc comment, declaration) pairs: each ``///`` comment and the line(s) it documents.

    Members after ``private:`` or ``protected:`` are left out, up to the next ``public:``.
    """
    lines = text.splitlines()
    entries, i, hidden = [], 0, False
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped in ("private:", "protected:"):
            hidden = True
        elif stripped == "public:" or re.match(r"^(template|class|struct|enum)\b", lines[i]):
            hidden = False
        if stripped.startswith("///"):
            doc = []
            while i < len(lines) and lines[i].lstrip().startswith("///"):
                doc.append(lines[i].lstrip()[3:].strip())
                i += 1
            decl = []
            while i < len(lines) and len(decl) < 12:
                decl.append(lines[i].rstrip())
                if _DECL_END.search(lines[i]):
                    break
                i += 1
            if re.match(r"^(template|class|struct|enum)\b", decl[0] if decl else ""):
                hidden = False
            code = textwrap.dedent("\n".join(decl)).rstrip()
            code = re.sub(r"\s*\{\s*$", "", code)
            if not hidden:
                entries.append((_doc_markdown(doc), code))
        i += 1
    return entries


_TAG = re.compile(r"^[@\\](param|tparam|return|returns|throws|throw|pre|note)\b\s*(.*)")


def _doc_markdown(lines):
    """A /// comment as Markdown: prose joined, Doxygen @param/@return/@throws as a list."""
    prose, items = [], []
    for line in lines:
        m = _TAG.match(line)
        if m:
            tag, rest = m.group(1), m.group(2)
            if tag in ("param", "tparam") and rest:
                name, _, what = rest.partition(" ")
                items.append(f"- `{name}`: {what}")
            else:
                label = {"returns": "return", "throw": "throws"}.get(tag, tag)
                items.append(f"- *{label}*: {rest}")
        elif items:
            items[-1] += " " + line
        else:
            prose.append(line)
    text = " ".join(p for p in prose if p)
    return "\n".join([text, "", *items] if items else [text])


def _leading_comment(text):
    out = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("//"):
            out.append(s.lstrip("/").strip())
        elif s.startswith("#pragma") or not s:
            if out:
                break
        else:
            break
    return " ".join(out)


def write_cpp_pages(app=None):
    """One Markdown page per folder of include/birkhoff (git-ignored, rewritten each build)."""
    include = ROOT / "include" / "birkhoff"
    GENERATED.mkdir(parents=True, exist_ok=True)
    folders = sorted(p for p in include.iterdir() if p.is_dir())
    index = ["# C++ headers", "", "The public headers of the engine, one page per folder."]
    index += [
        "Each documented declaration is shown with its comment, then the header's source.",
        "",
    ]
    index += ["```{toctree}", ":maxdepth: 1", ""] + [f.name for f in folders] + ["```", ""]
    _write_if_changed(GENERATED / "index.md", "\n".join(index))
    for folder in folders:
        page = [f"# `birkhoff/{folder.name}`", ""]
        for header in sorted(folder.rglob("*.hpp")):
            rel = header.relative_to(include.parent).as_posix()
            text = header.read_text()
            page += [f"## `{rel}`", ""]
            summary = _leading_comment(text)
            if summary:
                page += [summary, ""]
            page += [f"`#include <{rel}>`", ""]
            for doc, code in _header_entries(text):
                page += ["```cpp", code, "```", "", doc, ""]
            source = os.path.relpath(header, GENERATED)
            page += [
                "```{literalinclude} " + source,
                ":language: cpp",
                f":caption: {rel}",
                "```",
                "",
            ]
        _write_if_changed(GENERATED / f"{folder.name}.md", "\n".join(page))


_LITERAL = re.compile(r"(``.*?``|`[^`]*`)")


def escape_bars(app, what, name, obj, options, lines):
    """autodoc-process-docstring: bars outside literals are escaped.

    The docstrings write norms as plain text (|x - y|), which reStructuredText would read as
    substitution references.
    """
    for i, line in enumerate(lines):
        parts = _LITERAL.split(line)
        lines[i] = "".join(p if k % 2 else p.replace("|", "\\|") for k, p in enumerate(parts))


def drop_private_parameters(app, what, name, obj, options, signature, return_annotation):
    """autodoc-process-signature: parameters whose names start with _ are not the API."""
    if not signature:
        return None
    inner = signature[1:-1]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(inner[start:i].strip())
            start = i + 1
    parts.append(inner[start:].strip())
    kept = [p for p in parts if p and not p.lstrip("*").startswith("_")]
    return "(" + ", ".join(kept) + ")", return_annotation


def _write_if_changed(path, text):
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def setup(app):
    """Registers the directives and writes the C++ pages when the build starts."""
    app.add_directive("birkhoff-options", OptionsDirective)
    app.add_directive("birkhoff-cli", CliDirective)
    app.add_directive("birkhoff-benchmark", BenchmarkDirective)
    app.add_directive("birkhoff-references", ReferencesDirective)
    app.connect("doctree-resolved", link_citations)
    app.connect("builder-inited", write_cpp_pages)
    app.connect("autodoc-process-docstring", escape_bars)
    app.connect("autodoc-process-signature", drop_private_parameters)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
