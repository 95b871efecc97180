"""roff, the markup of manual pages, made readable where pandoc's readers are not enough: the idioms
of the tools that write most pages put as pandoc reads them (``idioms_for_pandoc``), what stops
pandoc taken out for a second try (``for_pandoc``), and a page pandoc still refuses turned into the
plain text groff would print (``roff_as_text``), its sections underlined so the plain-text rules
read them as headings.
"""

from __future__ import annotations

import re

__all__ = ["for_pandoc", "idioms_for_pandoc", "roff_as_text"]

_CONDITIONAL = re.compile(r"^[.'][ \t]*(?:if|ie|el)\b")
_TABLE = re.compile(r"^\.TS[ \t]*\n((?:(?!\.T[SE]\b)[^\n]*\n)*?)\.TE", re.M)
_WIDTH = re.compile(r"([lrcnasLRCNAS][A-Za-z]*)\(\d+(?:\.\d+)?[a-z]?\)")
_FORMAT_LINE = re.compile(r"[lrcnaLRCNAs^_=|tTbBiIfFpPvVwWeEzZ0-9(). \t]*\.[ \t]*")
# requests pandoc's mdoc reader knows: a dot-led text line that is none of them is text (``.js files``)
_REQUESTS = frozenset(
    re.findall(
        r"\w+",
        "br sp nf fi in ti ne ft ps vs ad na hy nh ce bp ds nr so tr ll ta fl ns rs mk rt cu ul lg ss cs bd fam ev pl po pn tl lt nm nn mc",
    )
)
_NOT_PRINTED = re.compile(r"[.'][ \t]*(?:ig|de1?|am1?)\b")  # to a line "..": never printed


# DocBook XSL's and Asciidoctor's list item: an indented block whose mark nroff draws by hand and
# troff by ``.IP`` (``.RS 4``, ``.ie n \{\``, ``\h'-04' 1.\h'+01'\c``, ``.\}``, ``.el \{\``,
# ``.sp -1``, ``.IP " 1." 4.2``, ``.\}``), then the item's text
_ITEM_IDIOM = re.compile(
    r"\.[ \t]*RS[ \t]*\d*[ \t]*\n\.[ \t]*ie n \\\{\\\n\\h'-?\d+'[ \t]*(\S+?)[ \t]*\\h'\+?\d+'\\c\n\.\\\}\n"
    r"\.[ \t]*el[ \t]*\\\{\\\n(?:\.[ \t]*(?:sp|IP)\b[^\n]*\n){1,3}\.\\\}\n"
)
_RS = re.compile(r"\.[ \t]*RS\b")
_RE = re.compile(r"\.[ \t]*RE\b")
_PARAGRAPH = re.compile(r"\.[ \t]*(?:PP|LP|P|sp)[ \t]*$")
_TERM = re.compile(r"\\f(?:[BI3]|\[[BI]\])\S")  # a term set in bold or italic
_GENERATOR = re.compile(r"^\.\\\"\s+Generator: (?:DocBook XSL|Asciidoctor)", re.M)
_POD_MACROS = {"Vb": ".nf", "Ve": ".fi", "Sp": ".sp"}  # Pod::Man's preamble defines these


def idioms_for_pandoc(text: str) -> str:
    """``text`` with the idioms of the tools that write most manual pages put as pandoc's man reader
    reads them, what groff prints unchanged: DocBook XSL's and Asciidoctor's list items (an
    indented block with its mark drawn for nroff and troff) as ``.IP`` items, nested as their
    blocks are, and their definitions (a term over an indented block: in bold or italic, or any
    where the page names one of them as its generator) as ``.TP``;
    Pod::Man's verbatim blocks (``.Vb``/``.Ve``, macros its preamble defines) as ``.nf``/``.fi``, its
    ``.Sp`` as ``.sp``, its index entries (``.IX``, which print nothing) left out, where pandoc read
    them as paragraph breaks: an item's text then fell out of its item."""
    if ".TS" in text:
        text = _TABLE.sub(_spans_and_header, text)
    pod = {name: req for name, req in _POD_MACROS.items() if re.search(rf"^\.de[ \t]+{name}\b", text, re.M)}
    # their pages say so; there a term over an indented block is a definition whatever its font
    docbook = _GENERATOR.search(text[:2000]) is not None
    lines = text.split("\n")
    out: list[str] = []
    # each open .RS: [what opened it ("item", "term" or "block"), whether a nested .RS was written]
    frames: list[list] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _RS.match(line) and (m := _ITEM_IDIOM.match("\n".join(lines[i : i + 11]) + "\n")) is not None:
            mark = m[1]
            _nest(frames, out)  # the first item inside an item or a definition: a list inside it
            out.append(
                ".IP \\(bu 4" if mark in ("\\(bu", "\\[bu]", "\\(em", "-", "*", "\\-") else f'.IP "{mark}" 4'
            )
            frames.append(["item", False])
            i += m[0].count("\n")
            continue
        if (
            _PARAGRAPH.match(line)
            and i + 2 < len(lines)
            and (_TERM.match(lines[i + 1]) or (docbook and lines[i + 1][:1] not in ".'"))
            and len(lines[i + 1]) < 200
            and _RS.match(lines[i + 2])
            and _ITEM_IDIOM.match("\n".join(lines[i + 2 : i + 13]) + "\n") is None
        ):
            _nest(frames, out)
            out += [".TP", lines[i + 1]]
            frames.append(["term", False])
            i += 3
            continue
        if (
            _PARAGRAPH.match(line)
            and frames
            and frames[-1][0] == "item"
            and i + 1 < len(lines)
            and not _RE.match(lines[i + 1])
        ):
            _nest(frames, out)  # an item's next paragraph (or code): in the item, where groff indents it
        if _RS.match(line):
            frames.append(["block", False])
        elif _RE.match(line) and frames:
            kind, nested = frames.pop()
            if kind != "block":
                if nested:
                    out.append(".RE")
                i += 1
                continue
        elif pod and (name := re.match(r"\.[ \t]*(Vb|Ve|Sp)\b", line)) and name[1] in pod:
            line = pod[name[1]]
        elif re.match(r"\.[ \t]*IX\b", line):
            i += 1
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _nest(frames: list[list], out: list[str]) -> None:
    """Before a block inside the open item or definition (a paragraph after the item's first, a
    list, a definition): the ``.RS`` that makes pandoc put it in the item, once an item."""
    if frames and frames[-1][0] in ("item", "term") and not frames[-1][1]:
        out.append(".RS 4")
        frames[-1][1] = True


# a tbl column's key letter and its modifiers (a font as ``f`` and its name, a width in parentheses)
_COLUMN = re.compile(
    r"([lrcnasLRCNAS^_=])((?:f(?:\(..|\[[^\]]*\]|[A-Z0-9])|\([^)]*\)|[^lrcnasLRCNAS^_=\s|])*)"
)
_RULE_ROW = re.compile(r"[_=][ \t]*$")


def _spans_and_header(m: re.Match) -> str:
    """A tbl table as pandoc reads it: a cell spanning columns (``s`` in its row's format, which
    pandoc ignores, moving the cells after it a column left) in each column it covers (a title over
    every column once, as HTML's reader has it), and a first row whose format sets it in bold over
    rows that are not set off by a rule (``_``) as the header row it is. A table that changes its
    format midway (``.T&``) is left as it is."""
    body = m[1].split("\n")
    if any(line.startswith(".T&") for line in body):
        return m[0]
    i = 1 if body and body[0].rstrip().endswith(";") else 0
    tab = "\t"
    if i and (t := re.search(r"tab\s*\((.)\)", body[0])):
        tab = t[1]
    j = i
    while j < len(body) and not body[j].rstrip().endswith(".") and j - i < 8:
        j += 1
    if j >= len(body):
        return m[0]
    formats = [_COLUMN.findall(f.rstrip().rstrip(".")) for f in body[i : j + 1]]
    rows: list[list[str]] = []  # each row's lines (a T{ cell runs over lines)
    current: list[str] = []
    for line in body[j + 1 :]:
        if not current and (_RULE_ROW.match(line) or not line.strip()):
            rows.append([line])
            continue
        current.append(line)
        text = "\n".join(current)
        if text.count("T{") <= text.count("T}"):
            rows.append(current)
            current = []
    if current:
        rows.append(current)
    data = [k for k, r in enumerate(rows) if not _RULE_ROW.match(r[0]) and r[0].strip()]
    if not formats or not data or not any(formats):
        return m[0]
    spans = any(key == "s" for f in formats for key, _ in f)
    bold = [all(re.search(r"[bB]|f(?:B|\(B|\[B)", mods) for _, mods in f) for f in formats]
    header = (
        len(data) > 1
        and bold[0]
        and not bold[min(1, len(bold) - 1)]
        and not any(_RULE_ROW.match(rows[k][0]) for k in range(data[0] + 1, data[1]))
    )
    if not spans and not header:
        return m[0]
    out_formats, out_rows = [], []
    for n, k in enumerate(data):
        f = formats[min(n, len(formats) - 1)]
        cells = tab.join(rows[k]).split(tab) if len(rows[k]) == 1 else _cells_of(rows[k], tab)
        if spans:
            title = len(f) > 1 and all(key == "s" for key, _ in f[1:])  # one cell over every column: once
            filled: list[str] = []
            for key, _ in f:
                if key == "s" and filled:
                    filled.append("" if title else filled[-1])
                elif cells:
                    filled.append(cells.pop(0))
            cells = filled + cells
        out_formats.append(" ".join("l" if key == "s" else key + mods for key, mods in f))
        out_rows.append(tab.join(cells))
    lines = body[:i] + out_formats[:-1] + [out_formats[-1] + "."]
    at, is_data = 0, set(data)
    for k, r in enumerate(rows):
        if k in is_data:
            lines.append(out_rows[at])
            if header and at == 0:
                lines.append("_")
            at += 1
        else:
            lines += r
    return ".TS\n" + "\n".join(lines).rstrip("\n") + "\n.TE"


def _cells_of(row: list[str], tab: str) -> list[str]:
    """The cells of a row written over several lines (``T{`` ... ``T}`` blocks), each whole."""
    cells, parts, depth = [], [], 0
    for piece in re.split(f"({re.escape(tab)})", "\n".join(row)):
        if piece == tab and depth == 0:
            cells.append("".join(parts))
            parts = []
            continue
        parts.append(piece)
        depth += piece.count("T{") - piece.count("T}")
    cells.append("".join(parts))
    return cells


def for_pandoc(text: str, reader: str) -> str:
    """``text`` without what stops pandoc's man and mdoc readers and shows nothing on the page: blocks
    that are never printed (``.ig``, macro definitions), conditionals (drawings, settings), a
    ``\\{`` outside one (a brace), a tbl column's width (``l(35)``), a table with no format line (one
    is made), a text line that starts with a dot and no request (``.js files``: as text); in mdoc,
    an ``.Os`` with arguments or none, and ``.Xo`` ... ``.Xc`` (a line's continuation)."""
    lines, depth, unprinted = [], 0, False
    for line in text.replace("\\\n", "").split("\n"):
        if unprinted or _NOT_PRINTED.match(line):
            unprinted = not line.startswith("..") if unprinted else True
            continue
        opens = line.count("\\{") - line.count("\\}")
        if depth or _CONDITIONAL.match(line):
            depth = max(0, depth + opens)
            continue
        if "\\{" in line or "\\}" in line:  # a brace outside a conditional: the text's own
            line = line.replace("\\{", "{").replace("\\}", "}")
        name = re.match(r"\.[ \t]*([a-z]\w*)", line)
        if name and reader == "mdoc" and name[1] not in _REQUESTS:
            line = "\\&" + line
        lines.append(line)
    text = "\n".join(lines)
    text = _TABLE.sub(_table_for_pandoc, text)
    if reader == "mdoc":
        text = re.sub(r"^\.Os\b.*$", ".Os", text, flags=re.M)
        text = _NAME_DESCRIPTION.sub(_joined, text)
        if ".Os" not in text:
            text = re.sub(r"^(\.Dt\b.*)$", r"\1\n.Os", text, count=1, flags=re.M)
        text = _XO_TAIL.sub(_joined, text)  # pandoc knows no .Xo ... .Xc
        text = re.sub(r"^\.X[oc][ \t]*\n", "", text, flags=re.M)
        text = re.sub(r"^\.Xc[ \t]+", r"\\&", text, flags=re.M)  # ".Xc ." ends a sentence
        text = re.sub(r"^\.Xo\b", ".No", text, flags=re.M)
        text = re.sub(r"[ \t]+X[oc](?=[ \t]|$)", "", text, flags=re.M)
    return text


_XO_TAIL = re.compile(
    r"^(\.[A-Z][a-z]\b[^\n]*?)[ \t]+Xo[ \t]*\n((?:(?!\.Sh\b)[^\n]*\n){0,20}?)\.?(?:([^\n]*?)[ \t]+)?Xc\b([^\n]*)$",
    re.M,
)
_NAME_DESCRIPTION = re.compile(r"^(\.Nd\b[^\n]*)\n((?:(?!\.S[hs]\b)[^\n]*\n){1,8}?)(?=\.Sh\b)()()", re.M)


def _joined(m: re.Match) -> str:
    """A macro line and the lines that go on it (``.It Xo`` to ``.Xc``; ``.Nd`` to the next section)
    as one line, their macros called from it."""
    parts = [m[1]] + [line.lstrip(".").strip() for line in m[2].split("\n") if line.strip()]
    if m.re is _NAME_DESCRIPTION:  # .Nd calls no macros: a joined line's own macro is left out
        parts = [parts[0]] + [re.sub(r"^[A-Z][a-z][ \t]+", "", p) for p in parts[1:]]
    parts += [p.strip().lstrip(".") for p in (m[3], m[4]) if p and p.strip()]
    return " ".join(parts) + ("" if m.re is _XO_TAIL else "\n")


def _table_for_pandoc(m: re.Match) -> str:
    body = m[1].split("\n")
    i = 0
    if body and body[0].rstrip().endswith(";"):
        i = 1
    j = i
    while (
        j < len(body)
        and _FORMAT_LINE.fullmatch(body[j]) is None
        and _FORMAT_LINE.fullmatch(body[j] + ".")
        and j - i < 8
    ):
        j += 1
    if j < len(body) and _FORMAT_LINE.fullmatch(body[j]):
        formats = [_WIDTH.sub(r"\1", f) for f in body[i : j + 1]]
        return ".TS\n" + "\n".join(body[:i] + formats + body[j + 1 :]) + ".TE"
    tab = "\t"
    if i and (t := re.search(r"tab\s*\((.)\)", body[0])):
        tab = t[1]
    columns = max((line.count(tab) + 1 for line in body[i:] if line and not line.startswith(".")), default=1)
    return ".TS\n" + "\n".join(body[:i] + [" ".join("l" * columns) + "."] + body[i:]) + ".TE"


# roff's named characters (``\(em``, ``\[bu]``) and strings (``\*(lq``) as the page prints them
_GLYPHS = {
    "em": "\u2014",
    "en": "\u2013",
    "bu": "\u2022",
    "aq": "'",
    "dq": '"',
    "lq": "\u201c",
    "rq": "\u201d",
    "oq": "\u2018",
    "cq": "\u2019",
    "Aq": "'",
    "co": "\u00a9",
    "rg": "\u00ae",
    "tm": "\u2122",
    "hy": "-",
    "mi": "-",
    "pl": "+",
    "mu": "\u00d7",
    "di": "\u00f7",
    "<=": "\u2264",
    ">=": "\u2265",
    "!=": "\u2260",
    "->": "\u2192",
    "<-": "\u2190",
    "de": "\u00b0",
    "ti": "~",
    "ha": "^",
    "ga": "`",
    "aa": "\u00b4",
    "rs": "\\",
    "sl": "/",
    "ba": "|",
    "br": "|",
    "ul": "_",
    "Fo": "\u00ab",
    "Fc": "\u00bb",
    "R": "\u00ae",
    "Tm": "\u2122",
    'L"': "\u201c",
    'R"': "\u201d",
}
_ESCAPE = re.compile(
    r"\\(?:"
    r"[fF](?:\[[^\]\n]*\]|\(..|.)"  # a font
    r"|\((?P<g2>..)|\[(?P<gn>[^\]\n]*)\]"  # a named character
    r"|\*(?:\[(?P<sn>[^\]\n]*)\]|\((?P<s2>..)|(?P<s1>.))"  # a string
    r"|[sS](?:[-+]?\d+|\[[^\]\n]*\]|\(..|'[^'\n]*')"  # a size
    r"|[hvlLNowbDXZRxHSCVYAB]'[^'\n]*'"  # motions, drawings, widths
    r"|[nm](?:\[[^\]\n]*\]|\(..|.)|[kgz]."  # registers, marks
    r"|(?P<c>.)"
    r")"
)
_KEPT = {
    "e": "\\",
    "\\": "\\",
    "-": "-",
    " ": " ",
    "0": " ",
    "~": " ",
    ".": ".",
    "'": "'",
    "`": "`",
    "t": "\t",
}
_FONT_MACRO = re.compile(r"\.(?:B|I|SM|SB|BR|BI|IB|IR|RB|RI)\b")
_BREAK = re.compile(r"\.(?:PP|P|LP|Pp|sp|br|TP|TQ|IP|HP|It|Bl|El|RS|RE|nf|fi|EX|EE|Bd|Ed|in|Dl|D1|ti|ne)\b")
_SECTION = re.compile(r"\.(SH|SS|Sh|Ss)\b[ \t]*(.*)")
_MDOC_MACRO = re.compile(
    r"(?:Ad|An|Ap|Ar|At|Bc|Bf|Bk|Bo|Bq|Brc|Bro|Brq|Bsx|Bx|Cd|Cm|D1|Dc|Dl|Do|Dq|Dv|Dx|Ec|Ef|Ek|Em|En|Eo|Er|Es|Ev|Ex|Fa|Fc|Fd|Fl|Fn|Fo|Fr|Ft|Fx|Hf|Ic|In|It|Lb|Li|Lk|Lp|Ms|Mt|Nd|Nm|No|Ns|Nx|Oc|Oo|Op|Ot|Ox|Pa|Pc|Pf|Po|Pp|Pq|Qc|Ql|Qo|Qq|Re|Rs|Rv|Sc|Sm|So|Sq|St|Sx|Sy|Ta|Tn|Ud|Ux|Va|Vt|Xc|Xo|Xr)"
)
_UNPRINTED = re.compile(
    r"\.(?:Dd|Dt|Os|Bl|El|Bd|Ed|Sm|Bk|Ek|Rs|Re|Bf|Ef)\b"
)  # the header, list and display settings
_WORD = re.compile(r'"((?:[^"]|"")*)"|(\S+)')


def _glyph(m: re.Match) -> str:
    if (name := m["g2"] or m["gn"] or m["sn"] or m["s2"] or m["s1"]) is not None:
        return _GLYPHS.get(name, "")
    return _KEPT.get(m["c"] or "", "")


def _words(args: str) -> list[str]:
    return [(m[1].replace('""', '"') if m[1] is not None else m[2]) for m in _WORD.finditer(args)]


def _mdoc_line(args: str) -> str:
    """An mdoc macro line's words as printed: macro names left out, ``Fl x`` as ``-x``."""
    out: list[str] = []
    words = _words(args)
    for w in words:
        if w == "Fl":
            out.append("-")
        elif _MDOC_MACRO.fullmatch(w):
            continue
        elif out and out[-1] == "-":
            out[-1] = "-" + w
        else:
            out.append(w)
    line = " ".join(out)
    return re.sub(r" ([.,;:)\]?!])", r"\1", line)


def roff_as_text(text: str) -> str:
    """A page as the plain text groff would print: requests, comments, conditionals and what is
    never printed left out, escapes as their characters, a section's title underlined (``=`` for
    ``.SH``, ``-`` for ``.SS``), a blank line where a paragraph, tagged paragraph or list item
    starts, a table's rows with their cells a tab apart."""
    out: list[str] = []
    depth, unprinted = 0, False
    table = None  # None, or the format lines still to skip: True until a line ending in "."
    for line in text.replace("\\\n", "").split("\n"):
        if unprinted or _NOT_PRINTED.match(line):
            unprinted = not line.startswith("..") if unprinted else True
            continue
        line = re.sub(r'\\".*$', "", line) if '\\"' in line else line
        if depth or _CONDITIONAL.match(line):
            depth = max(0, depth + line.count("\\{") - line.count("\\}"))
            continue
        if line.startswith((".TS", ".TE")):
            table = True if line.startswith(".TS") else None
            out.append("")
            continue
        if table is True:  # options (``allbox;``), then format lines, the last ending in "."
            if line.rstrip().endswith(";") or _FORMAT_LINE.fullmatch(line.rstrip() + "."):
                continue
            table = False
            if _FORMAT_LINE.fullmatch(line):
                continue
        if table is False and line.strip() in ("_", "=", "T{", "T}", ".T&"):
            continue
        if line.startswith((".", "'")) and not line.startswith(("\\&", ".\\&")):
            if (m := _SECTION.match(line)) is not None:
                title = _ESCAPE.sub(_glyph, " ".join(_words(m[2])))
                if title:
                    out += ["", title, ("=" if m[1].upper() == "SH" else "-") * len(title), ""]
                continue
            if _FONT_MACRO.match(line):
                macro, _, args = line[1:].partition(" ")
                joined = ("" if len(macro) == 2 and macro != "SM" else " ").join(_words(args))
                out.append(_ESCAPE.sub(_glyph, joined))
                continue
            if (m := _BREAK.match(line)) is not None:
                out.append("")
                rest = line[m.end() :].strip()
                if m[0] == ".It" and rest:  # an item's head: .It Fl v
                    out.append(_ESCAPE.sub(_glyph, _mdoc_line(rest)))
                elif m[0] == ".IP" and rest:  # a paragraph's tag, before its indent
                    out.append(_ESCAPE.sub(_glyph, _words(rest)[0]))
                continue
            if re.match(r"\.[A-Z][a-z]\b", line) and not _UNPRINTED.match(line):
                words = _ESCAPE.sub(_glyph, _mdoc_line(line[1:]))
                out.append(f"\u2014 {words}" if line.startswith(".Nd") else words)  # name \u2014 what it does
            continue
        out.append(_ESCAPE.sub(_glyph, line))
    page = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", page).strip() + "\n"
