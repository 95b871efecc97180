"""Manual pages (roff) read through pandoc's man reader: sections, options joined to what they do,
examples as code, the NAME line the title. Before, ``bash.1`` was plain text: 8,673 paragraphs of
roff requests (``.TP``, ``\\fB``), no heading, no option joined to its text."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from raychunk.parse import parse_document
from tests.spans import assert_spans_match

pytest.importorskip("pypandoc")

PAGE = rb""".\" Manual page for raychunk.
.TH RAYCHUNK 1 "2026-12-06" "raychunk 0.1" "User Commands"
.SH NAME
raychunk \- chunk documents for retrieval
.SH SYNOPSIS
.B raychunk run
.RI [ options ]
.SH OPTIONS
.TP
.BR \-\-input " " \fIPATH\fR
Read the documents under
.IR PATH .
.TP
.B \-\-no\-embed
Write chunks without vectors.
.SS Environment
.IP RAY_ADDRESS 4
The cluster to submit to.
.SH EXAMPLES
.nf
raychunk run \-\-input docs/ \-\-output out/
.fi
"""


def parsed(data: bytes, name: str):
    p = parse_document(data, name)
    assert_spans_match(p, rendered=("page_break",))
    return p


@pytest.mark.parametrize("name", ["raychunk.1", "raychunk.man", "raychunk.1.gz", "raychunk"])
def test_a_manual_page_reads_as_man_shows_it(name):
    data = gzip.compress(PAGE) if name.endswith(".gz") else PAGE
    p = parsed(data, name)
    assert (p.document.format, p.document.status, p.document.reason) == ("man", "ok", "")
    assert p.document.title == "raychunk - chunk documents for retrieval"
    assert [(b.kind, b.text, b.heading_path) for b in p.blocks] == [
        ("heading", "NAME", ()),
        ("paragraph", "raychunk - chunk documents for retrieval", ("NAME",)),
        ("heading", "SYNOPSIS", ()),
        ("paragraph", "raychunk run [options]", ("SYNOPSIS",)),
        ("heading", "OPTIONS", ()),
        ("paragraph", "--input PATH: Read the documents under PATH.", ("OPTIONS",)),
        ("paragraph", "--no-embed: Write chunks without vectors.", ("OPTIONS",)),
        ("heading", "Environment", ("OPTIONS",)),
        ("paragraph", "RAY_ADDRESS: The cluster to submit to.", ("OPTIONS", "Environment")),
        ("heading", "EXAMPLES", ()),
        ("code", "raychunk run --input docs/ --output out/", ("EXAMPLES",)),
    ]


def test_what_is_not_a_manual_page_stays_what_it_is():
    """A rotated log (``syslog.1``) is text; a page that only links to another (``.so``) is empty
    and says which page to read."""
    log = b"".join(
        b"Dec  6 21:%02d:01 host CRON[%d]: (root) CMD (run-parts /etc/cron.hourly)\n" % (i, i)
        for i in range(20)
    )
    assert parse_document(log, "/var/log/syslog.1").document.format == "text"
    link = parse_document(b".so man1/systemd.1\n", "init.1").document
    assert (link.format, link.status) == ("man", "empty")
    assert link.reason == "a link to another manual page (.so man1/systemd.1): that page is read on its own"


def test_a_page_of_long_synopsis_or_a_big_table_by_its_title_line():
    """libpng(3): 200 lines of prototypes in bold after ``.TH``, few requests among them; a page
    that is mostly a tbl table. The title line first makes either a manual page."""
    protos = "".join(
        f"\\fBvoid png_fn_{i} (png_structp \\fP\\fIpng_ptr\\fP\\fB);\\fP\n\n" for i in range(150)
    )
    src = f'.TH LIBPNG 3 "November 20, 2022"\n.SH NAME\nlibpng \\- PNG library\n.SH SYNOPSIS\n{protos}.SH DESCRIPTION\nText.\n'
    doc = parse_document(src.encode(), "libpng.3")
    assert doc.document.format == "man" and doc.document.title == "libpng - PNG library"
    assert [b.text for b in doc.blocks if b.kind == "heading"] == ["NAME", "SYNOPSIS", "DESCRIPTION"]
    rows = "".join(f"pc{i}\tGeneric {i}-key PC\n" for i in range(300))
    table = f'.\\" WARNING: generated\n.TH XKB 7 "2.35"\n.SH MODELS\n.TS\nleft,box;\nlB lB\n___\nlB l.\nModel\tDescription\n{rows}.TE\n'
    doc = parse_document(table.encode(), "xkeyboard-config.7")
    assert doc.document.format == "man"
    assert any(b.kind == "table" and b.rows[1] == ("pc0", "Generic 0-key PC") for b in doc.blocks)
    # text that only mentions the request is not a page
    assert parse_document(b"Write .TH first in a page.\n" * 30, "notes.1").document.format == "text"


MAN = Path("/usr/share/man")


@pytest.mark.skipif(not (MAN / "man1" / "bash.1.gz").exists(), reason="no system manual pages here")
def test_the_systems_own_manual_pages():
    """bash(1) (350 KB of roff) and a sample of the machine's pages: each a manual page, with its
    sections as headings and its options joined to their text."""
    p = parsed((MAN / "man1" / "bash.1.gz").read_bytes(), "bash.1.gz")
    assert p.document.title == "bash - GNU Bourne-Again SHell"
    headings = [b.text for b in p.blocks if b.kind == "heading"]
    assert headings[:4] == ["NAME", "SYNOPSIS", "COPYRIGHT", "DESCRIPTION"] and len(headings) > 60
    assert any(b.text.startswith("-c: If the -c option is present") for b in p.blocks)
    pages = sorted((MAN / "man1").glob("*.1.gz"))[:40]
    for page in pages:
        doc = parse_document(page.read_bytes(), page.name)
        assert doc.document.format == "man", page
        assert doc.document.status in ("ok", "empty"), (page, doc.document.reason)


def test_a_translated_page_with_a_bare_font_escape():
    """po4a's translations write ``\\f\\fI`` (a font escape naming no font, which groff ignores and
    pandoc's reader stopped on: the page was read as plain text, roff and all), and their first
    section is NAME in the page's language: its ``name - what it does`` line is the title."""
    page = (
        '.TH FUSER 1 2022\\-11\\-02 psmisc "사용자 명령"\n.SH 이름\nfuser \\- 파일을 사용하는 프로세스를 식별합니다\n'
        ".SH 개요\n\\fBfuser\\fP [\\fB\\-n\\fP \\f\\fI영역\\fP\\fP] \\f\\fI이름\\fP\\fP ...\n"
    ).encode()
    p = parsed(page, "fuser.1")
    assert (p.document.format, p.document.status, p.document.reason) == ("man", "ok", "")
    assert p.document.title == "fuser - 파일을 사용하는 프로세스를 식별합니다"
    assert [b.text for b in p.blocks if b.kind == "heading"] == ["이름", "개요"]


MDOC_PANDOC_REFUSES = """\
.Dd September 7, 2001
.Dt FROB 1
.Os Debian Project
.Sh NAME
.Nm frob
.Nd frobnicate
files in place
.Sh DESCRIPTION
.Nm
reads its configuration from
.Pa ~/.frobrc .
.Bl -tag -width Ds
.It Cm ProxyHost
Names the host to go through, as either
.Xo
.Op Ar user No @
.Ar host
.Op : Ns Ar port
.Xc .
The default is none.
.It Cm Level Xo
.Ar number
.Xc
How hard to frob.
.El
.js files are frobbed as text.
"""

MAN_PANDOC_REFUSES = """\
.TH FROB 1
.ig
Copyright notice that groff never prints.
..
.SH NAME
frob \\- frobnicate files
.SH SYNOPSIS
.TS
allbox;
\\fBfrob\\fR [\\fIOPTIONS\\fR]	[\\fIFILE\\fR]
.TE
.SH KEYS
.TS
tab(	);
l(35)B l(34)B
l(35) l(34).
KEY	VALUE
level	How hard to frob
.TE
.SH OPTIONS
.TP 12
\\fB\\-\\-when\\fR=\\fIexpr\\fR \\{
.TQ
\\fB\\-w\\fR
Frob only when \\fIexpr\\fR holds.
"""


def test_pages_pandoc_refuses_are_read_again_without_what_stops_it():
    """ssh_config(5), tmux(1), jq(1), strace(1), gcloud's pages: pandoc's readers stop on ``.Xo``,
    an ``.Os`` with arguments, a ``.Nd`` over two lines, a text line starting with a dot, ``.ig``,
    a tbl width or a table with no format line, a ``\\{`` outside a conditional. The page is read
    again without them, by pandoc, with no reason to give: it was raw roff as plain text."""
    doc = parse_document(MDOC_PANDOC_REFUSES.encode(), "frob.1")
    assert (doc.document.format, doc.document.status, doc.document.reason) == ("man", "ok", "")
    assert doc.document.title == "frob \u2014 frobnicate files in place"
    texts = [b.text for b in doc.blocks]
    assert (
        "ProxyHost: Names the host to go through, as either [user @] host [:port] . The default is none."
        in texts
    )
    assert "Level number: How hard to frob." in texts
    assert any(".js files are frobbed as text." in t for t in texts)
    assert not any(t.startswith((".Xo", ".Xc", ".Os", "Xo", "Xc")) or " Xo" in t or " Xc" in t for t in texts)

    doc = parse_document(MAN_PANDOC_REFUSES.encode(), "frob.1")
    assert (doc.document.status, doc.document.reason) == ("ok", "")
    text = "\n".join(b.text for b in doc.blocks)
    assert "Copyright notice" not in text
    keys = next(b for b in doc.blocks if b.kind == "table" and b.heading_path == ("KEYS",))
    assert ("level", "How hard to frob") in keys.rows
    assert any(b.text == "frob [OPTIONS] [FILE]" and b.heading_path == ("SYNOPSIS",) for b in doc.blocks)
    assert "--when=expr {" in text and "Frob only when expr holds." in text


def test_a_page_pandoc_never_reads_is_its_printed_text():
    """rpc_soc(3t): an mdoc function list pandoc refuses even after the second try. Read as the text
    groff would print, not its raw roff: sections as headings, macro names and escapes left out."""
    src = MDOC_PANDOC_REFUSES.replace(
        ".El\n", '.It Ft int Fo frob_call Fa "char *host" Fa "int level" Fc\nCalls it.\n.El\n'
    )
    doc = parse_document(src.encode(), "frob.3")
    assert doc.document.status == "ok" and doc.document.format == "man"
    assert doc.document.reason.startswith("pandoc could not convert this .man file")
    assert doc.document.reason.endswith("read as plain text; its roff requests left out")
    assert doc.document.title == "frob \u2014 frobnicate files in place"
    assert [b.text for b in doc.blocks if b.kind == "heading"] == ["NAME", "DESCRIPTION"]
    text = "\n".join(b.text for b in doc.blocks)
    assert "ProxyHost" in text and "int frob_call char *host int level" in text
    for raw in (".Sh", ".It", "Fa ", "Xo", ".Dd", "Debian Project", "\\f"):
        assert raw not in text, raw


POD2MAN = rb""".\" Automatically generated by Pod::Man 4.14 (Pod::Simple 3.43)
.de Sp \" Vertical space (when we can't use .PP)
.if t .sp .5v
.if n .sp
..
.de Vb \" Begin verbatim text
.ft CW
.nf
.ne \\$1
..
.de Ve \" End verbatim text
.ft R
.fi
..
.IX Title "Ledger::Tool 3pm"
.TH Ledger::Tool 3pm "2026-12-07" "perl v5.36.0" "User Contributed Perl Documentation"
.SH "NAME"
Ledger::Tool \- move ledgers between clusters
.SH "SYNOPSIS"
.IX Header "SYNOPSIS"
.Vb 2
\&  use Ledger::Tool;
\&  my $t = Ledger::Tool\->new(size => 3);
.Ve
.SH "OPTIONS"
.IX Header "OPTIONS"
.IP "\fBsize\fR" 4
.IX Item "size"
How many replicas to keep.
.IP "1." 4
.IX Item "1."
Drain the queue.
.IP "2." 4
.IX Item "2."
Stop the workers.
.Sp
.IP "\(bu" 4
A bullet.
"""

DOCBOOK = rb"""'\" t
.\"     Title: tool
.\"    Author: [FIXME: author] [see http://www.docbook.org/tdg5/en/html/author]
.\" Generator: DocBook XSL Stylesheets vsnapshot <http://docbook.sf.net/>
.TH "TOOL" "1" "12/07/2026" "tool 1.0" "tool Manual"
.ie \n(.g .ds Aq \(aq
.el       .ds Aq '
.SH "NAME"
tool \- move ledgers between clusters
.SH "OPTIONS"
.PP
\fB\-\-size\fR=\fIN\fR
.RS 4
How many replicas to keep\&.
.RE
.SH "STEPS"
.sp
.RS 4
.ie n \{\
\h'-04' 1.\h'+01'\c
.\}
.el \{\
.sp -1
.IP "  1." 4.2
.\}
Drain the queue\&.
.sp
.RS 4
.ie n \{\
\h'-04'\(bu\h'+03'\c
.\}
.el \{\
.sp -1
.IP \(bu 2.3
.\}
the API first
.RE
.RE
.sp
.RS 4
.ie n \{\
\h'-04' 2.\h'+01'\c
.\}
.el \{\
.sp -1
.IP "  2." 4.2
.\}
Stop the workers\&.
.RE
.PP
After the steps.
"""

DOCBOOK_BLOCKS = rb"""'\" t
.\" Generator: DocBook XSL Stylesheets vsnapshot <http://docbook.sf.net/>
.TH "GIT\-LOG" "1" "12/07/2026" "Git 2.43" "Git Manual"
.SH "NAME"
git-log \- Show commit logs
.SH "OPTIONS"
.PP
\-L<start>
.RS 4
Trace the range\&.
.sp
The forms:
.sp
.RS 4
.ie n \{\
\h'-04'\(bu\h'+03'\c
.\}
.el \{\
.sp -1
.IP \(bu 2.3
.\}
number
.sp
An absolute line number\&.
.RE
.sp
.RS 4
.ie n \{\
\h'-04'\(bu\h'+03'\c
.\}
.el \{\
.sp -1
.IP \(bu 2.3
.\}
/regex/
.sp
The first line that matches\&.
.sp
.if n \{\
.RS 4
.\}
.nf
git log \-L/main/
.fi
.if n \{\
.RE
.\}
.RE
.sp
After the forms, still of \-L\&.
.RE
.PP
\-\-graph
.RS 4
Draw the history\&.
.RE
"""

TBL = rb""".TH TOOL 1
.SH LIMITS
.TS
allbox tab(:);
lB lB lB
l l l
l s l.
Region:Seats:Price
north:10:3
Total:13
.TE
.TS
tab(@);
c s
l l.
Flags
ATF_COM@Lookup complete
.TE
"""


def _blocks(p) -> list[tuple]:
    """A page's blocks other than headings, as (kind, level, marker, text)."""
    return [(b.kind, b.level, b.marker, b.text) for b in p.blocks if b.kind != "heading"]


def test_pod2man_pages_keep_their_items_and_verbatim_blocks():
    """Pod::Man (every Perl module's page): its index entries (``.IX``) print nothing, where pandoc
    read each as a break that left the item's text out of its item; its ``.Vb``/``.Ve`` verbatim
    blocks are code. Before: the items empty, their texts paragraphs, the synopsis a paragraph.
    Over this machine's 500 Pod::Man pages: code blocks 0 before."""
    p = parsed(POD2MAN, "Ledger::Tool.3pm")
    got = _blocks(p)
    assert (
        "code",
        0,
        "",
        "  use Ledger::Tool;\n  my $t = Ledger::Tool->new(size => 3);",
    ) in got  # as printed
    assert ("paragraph", 0, "", "size: How many replicas to keep.") in got
    assert ("list_item", 0, "1.", "Drain the queue.") in got
    assert ("list_item", 0, "2.", "Stop the workers.") in got
    assert ("list_item", 0, "", "A bullet.") in got or ("list_item", 0, "-", "A bullet.") in got
    assert not any("IX" in b.text for b in p.blocks)


def test_docbook_and_asciidoctor_pages_keep_their_lists_and_definitions():
    """DocBook XSL (systemd's pages) and Asciidoctor (git's) draw a list item's mark by hand for
    nroff and by ``.IP`` for troff, inside an indented block, and a definition as a bold term over
    an indented block: read as items with their numbers, nested as written, and ``term: text``.
    Before: the items were paragraphs with no number, the term a paragraph and its text a quote."""
    assert _blocks(parsed(DOCBOOK, "tool.1")) == [
        ("paragraph", 0, "", "tool - move ledgers between clusters"),
        ("paragraph", 0, "", "--size=N: How many replicas to keep."),
        ("list_item", 0, "1.", "Drain the queue."),
        ("list_item", 1, "-", "the API first"),
        ("list_item", 0, "2.", "Stop the workers."),
        ("paragraph", 0, "", "After the steps."),
    ]


def test_docbook_items_keep_their_paragraphs_and_lists_stay_in_their_definitions():
    """An item's second paragraph (AsciiDoc's ``+`` continuation: a ``.sp`` in the item's block, where
    groff indents it under the item) is the item's, as a loose Markdown item's is; a list inside a
    definition's block, and what follows it, stay in the definition, in order. Before: each second
    paragraph was a paragraph of its own after its item (git-log(1)'s ``-L`` forms, its pretty
    formats); over this machine's 574 DocBook XSL pages, 42 change and no word moves."""
    assert _blocks(parsed(DOCBOOK_BLOCKS, "git-log.1")) == [
        ("paragraph", 0, "", "git-log - Show commit logs"),
        ("paragraph", 0, "", "-L<start>: Trace the range."),
        ("paragraph", 0, "", "The forms:"),
        ("list_item", 0, "-", "number\nAn absolute line number."),
        ("list_item", 0, "-", "/regex/\nThe first line that matches."),
        ("code", 0, "", "git log -L/main/"),
        ("paragraph", 0, "", "After the forms, still of -L."),
        ("paragraph", 0, "", "--graph: Draw the history."),
    ]


def test_tbl_spans_and_bold_header_rows():
    """tbl's ``s`` (a cell spanning the column before it) and a bold first row: the spanning cell's
    text in each column it covers, the cells after it in their own columns, the bold row a header
    (gcloud's pages, the Linux man-pages' attribute tables).
    Before: ``Total | 13 |`` (13 under Seats) and no header row."""
    p = parsed(TBL, "tool.1")
    table, titled = [b for b in p.blocks if b.kind == "table"]
    assert table.rows == (("Region", "Seats", "Price"), ("north", "10", "3"), ("Total", "Total", "13"))
    assert table.header_rows == 1
    # a cell over every column is a title: its text once (arp(7)'s flags table; gtbl(1)'s example
    # was a paragraph reading "TABLE" before)
    assert titled.rows == (("Flags", ""), ("ATF_COM", "Lookup complete")) and titled.header_rows == 0
