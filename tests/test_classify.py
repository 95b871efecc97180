"""One labelled fixture per document type, parsed and classified; and the doc_types.yaml checks."""

import io
import textwrap

import pytest

from raychunk.classify import DOC_TYPES, classify
from raychunk.config import DEFAULT_DOC_TYPES, ConfigError, load_doc_types
from raychunk.parse import parse_document

CFG = load_doc_types()


def _dedent(s: str) -> str:
    return textwrap.dedent(s).lstrip()


def manual_md() -> bytes:
    """A router's user manual: a deep heading tree, numbered steps and commands."""
    sections = []
    for n, (topic, tasks) in enumerate(
        [
            ("Installation", ["Unpack the router", "Connect the cables", "Power on"]),
            (
                "Configuration",
                ["Set the admin password", "Configure the Wi-Fi network", "Enable the firewall"],
            ),
            ("Maintenance", ["Update the firmware", "Back up the settings", "Restore factory defaults"]),
        ],
        start=1,
    ):
        sections.append(f"## {n}. {topic}\n\nThis chapter covers {topic.lower()} of the AX-200 router.\n")
        for task in tasks:
            sections.append(
                f"### {task}\n\nBefore you begin, make sure the router is within reach of a power outlet.\n\n"
                f"#### Steps\n\n1. Open the admin console at `http://192.168.1.1`.\n"
                f"2. Sign in with the administrator account.\n3. Go to **{topic} > {task}**.\n"
                f"4. Follow the prompts and select **Apply**.\n\n"
                f"```sh\nrouterctl {task.split()[0].lower()} --confirm\n```\n\n"
                f"> **Note:** the router restarts when the change is applied; wait two minutes.\n"
            )
    return ("# AX-200 Router User Manual\n\n" + "\n".join(sections)).encode()


def reference_md() -> bytes:
    """An API specification: most of its text is in parameter and status-code tables."""
    params = "\n".join(
        f"| `{name}` | {typ} | {req} | {desc} |"
        for name, typ, req, desc in [
            ("account_id", "string", "yes", "Identifier of the account that owns the resource."),
            ("region", "string", "yes", "Region code, for example eu-west-1 or us-east-2."),
            ("size_gb", "integer", "no", "Volume size in gigabytes, between 1 and 16384."),
            ("iops", "integer", "no", "Provisioned operations per second, for io2 volumes only."),
            ("encrypted", "boolean", "no", "Whether the volume is encrypted at rest; defaults to true."),
            ("kms_key", "string", "no", "Key used for encryption when encrypted is true."),
            ("tags", "map", "no", "Key/value labels, at most 50 per resource."),
            ("snapshot_id", "string", "no", "Snapshot to create the volume from."),
        ]
    )
    codes = "\n".join(
        f"| {code} | {meaning} |"
        for code, meaning in [
            (200, "The request succeeded."),
            (400, "A parameter is missing or malformed."),
            (403, "The caller may not act on this account."),
            (404, "The resource does not exist."),
            (409, "The resource is in a state that forbids the request."),
            (429, "Too many requests; retry after the Retry-After delay."),
        ]
    )
    table = "| Name | Type | Required | Description |\n|---|---|---|---|\n" + params
    status = "| Code | Meaning |\n|---|---|\n" + codes
    return (
        _dedent(
            """
        # Volumes API v2

        ## CreateVolume

        Creates a block storage volume.

        {table}

        ## ModifyVolume

        Changes the size or performance of a volume.

        {table}

        ## Status codes

        {status}
        """
        )
        .format(table=table, status=status)
        .encode()
    )


def prose_md() -> bytes:
    """A narrative article: paragraphs of running text under a couple of headings."""
    paragraphs = [
        "When the harbour froze in the winter of 1894, the fishing families of the town had already "
        "spent three seasons watching their catches shrink. The older men blamed the new steamers that "
        "worked the outer banks; the younger ones blamed the older men for refusing to change.",
        "Margaret Ellis kept the accounts for the cooperative that year, and her ledgers tell a quieter "
        "story than the newspapers did. Debts were carried from one season to the next, forgiven when a "
        "boat was lost, and settled in kind when money could not be found.",
        "By the spring, half of the cooperative's members had taken work at the cannery across the bay. "
        "The work was steady but the hours were long, and the letters they wrote home describe a life "
        "measured by the whistle rather than by the tide.",
        "Historians have often treated the cooperative's collapse as inevitable, a footnote to the "
        "industrialisation of the fisheries. Yet the ledgers suggest that it was a matter of a few bad "
        "decisions, made by people who had every reason to believe the sea would provide as it always had.",
        "What survived was not the cooperative but its habits: the shared nets, the informal credit, and "
        "the conviction that a town could look after its own. Those habits outlasted the cannery too, "
        "which closed in 1931 and left the harbour quieter than it had been in a century.",
    ]
    body = "\n\n".join(paragraphs[:3]) + "\n\n## The ledgers\n\n" + "\n\n".join(paragraphs[3:])
    return f"# The Winter the Harbour Froze\n\n{body}\n".encode()


def faq_md() -> bytes:
    """A help-centre FAQ: every heading is a question, followed by its answer."""
    pairs = [
        (
            "How do I reset my password?",
            "Open the sign-in page, choose *Forgot password* and follow the link.",
        ),
        ("Can I change my username?", "No. Usernames are permanent, but you can change your display name."),
        ("How do I delete my account?", "Go to Settings > Account and select *Delete account*."),
        ("Which browsers are supported?", "The latest two versions of Chrome, Firefox, Safari and Edge."),
        ("Is my data encrypted?", "Yes, in transit with TLS 1.3 and at rest with AES-256."),
    ]
    body = "\n\n".join(f"## {q}\n\n{a}" for q, a in pairs)
    return f"# Frequently asked questions\n\n{body}\n".encode()


def faq_txt() -> bytes:
    """An FAQ as plain text, in Q:/A: form."""
    pairs = [
        ("What are your opening hours?", "Monday to Friday, 9am to 5pm."),
        ("Do you ship abroad?", "Yes, to most countries in Europe and North America."),
        ("How long does delivery take?", "Three to five working days within the country."),
        ("Can I return an item?", "Yes, within 30 days, unused and in its original packaging."),
    ]
    return ("\n\n".join(f"Q: {q}\nA: {a}" for q, a in pairs) + "\n").encode()


def transcript_txt() -> bytes:
    """A meeting transcript: one speaker turn per line."""
    turns = [
        ("Alice", "Thanks everyone for joining. Let's start with the release status."),
        ("Bob", "The build is green and the last blocker was fixed yesterday."),
        ("Alice", "Great. Any concerns about the migration scripts?"),
        ("Carol", "I tested them on a copy of production data and they took about ten minutes."),
        ("Bob", "That's within the maintenance window, so I think we're fine."),
        ("Alice", "Good. Carol, can you write up the rollback steps?"),
        ("Carol", "Sure, I'll have them in the wiki by tomorrow."),
        ("Dan", "One more thing: the support team needs the release notes by Thursday."),
        ("Alice", "Noted. Let's wrap up there."),
    ]
    return ("Release sync, 12 March\n\n" + "\n".join(f"{who}: {what}" for who, what in turns) + "\n").encode()


def server_log() -> bytes:
    """A machine log: one timestamped event per line, no blank lines, no speakers."""
    events = [
        ("notice", "workerEnv.init() ok /etc/httpd/conf/workers2.properties"),
        ("error", "mod_jk child workerEnv in error state 6"),
        ("notice", "jk2_init() Found child 6725 in scoreboard slot 10"),
        ("error", "[client 10.0.0.7] Directory index forbidden by rule: /var/www/html/"),
        ("notice", "workerEnv.init() ok /etc/httpd/conf/workers2.properties"),
    ]
    lines = [
        f"[Sun Dec 04 04:{47 + i // 5:02d}:{(i * 7) % 60:02d} 2005] [{level}] {msg}"
        for i, (level, msg) in enumerate(events * 6)
    ]
    return ("\n".join(lines) + "\n").encode()


def news_md() -> bytes:
    """A news feature with site-style deep headings but no procedures: still prose."""
    para = (
        "The council voted on Tuesday to close the old bridge to traffic, ending months of debate. "
        "Residents on both banks had argued that the detour would add twenty minutes to the school run, "
        "while engineers warned that the structure could not carry another winter of heavy lorries."
    )
    parts = ["# City News", "## Local", "### Council closes the old bridge", para, para]
    parts += ["### What happens next", para, "#### Reactions", para, "## Opinion", para]
    return ("\n\n".join(parts) + "\n").encode()


def records_csv() -> bytes:
    rows = ["sku,name,price,stock"] + [
        f"SKU-{i:04d},Widget model {i},{9.99 + i:.2f},{i * 7 % 50}" for i in range(25)
    ]
    return ("\n".join(rows) + "\n").encode()


def code_py() -> bytes:
    return _dedent(
        '''
        """Inventory helpers."""

        from dataclasses import dataclass


        @dataclass
        class Item:
            sku: str
            price: float
            stock: int = 0

            def value(self) -> float:
                return self.price * self.stock


        def restock(items: list[Item], amount: int) -> list[Item]:
            """Add ``amount`` to every item's stock."""
            return [Item(i.sku, i.price, i.stock + amount) for i in items]
        '''
    ).encode()


def slides_pptx() -> bytes:
    from pptx import Presentation

    deck = Presentation()
    title = deck.slides.add_slide(deck.slide_layouts[0])
    title.shapes.title.text = "Quarterly review"
    title.placeholders[1].text = "Sales and operations, Q3"
    for heading, bullets in [
        ("Highlights", ["Revenue up 12%", "Two new regions", "Churn down to 3%"]),
        ("Risks", ["Supplier delays", "Hiring in support"]),
        ("Next steps", ["Launch the partner programme", "Close the Berlin office lease"]),
    ]:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = heading
        frame = slide.placeholders[1].text_frame
        frame.text = bullets[0]
        for b in bullets[1:]:
            frame.add_paragraph().text = b
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def slides_pdf() -> bytes:
    """A deck exported to PDF: landscape pages with a title and a few short bullet lines each."""
    import pymupdf

    doc = pymupdf.open()
    for heading, bullets in [
        ("Quarterly review", ["Sales and operations", "Q3 2024"]),
        ("Highlights", ["Revenue up 12%", "Two new regions", "Churn down to 3%"]),
        ("Risks", ["Supplier delays", "Hiring in support"]),
        ("Next steps", ["Launch the partner programme", "Close the Berlin office lease"]),
    ]:
        page = doc.new_page(width=960, height=540)
        page.insert_text((60, 90), heading, fontsize=36)
        for i, b in enumerate(bullets):
            page.insert_text((80, 170 + 50 * i), f"- {b}", fontsize=22)
    return doc.tobytes()


FIXTURES = [
    ("manual", "router-manual.md", manual_md),
    ("reference", "volumes-api.md", reference_md),
    ("prose", "harbour.md", prose_md),
    ("prose", "bridge-news.md", news_md),
    ("faq", "help-faq.md", faq_md),
    ("faq", "shop-faq.txt", faq_txt),
    ("records", "products.csv", records_csv),
    ("transcript", "release-sync.txt", transcript_txt),
    ("transcript", "httpd-error.log", server_log),
    ("code", "inventory.py", code_py),
    ("slides", "review.pptx", slides_pptx),
    ("slides", "review.pdf", slides_pdf),
]


def test_every_type_has_a_fixture():
    assert {t for t, _, _ in FIXTURES} == set(DOC_TYPES)


@pytest.mark.parametrize(("expected", "name", "build"), FIXTURES, ids=[f[1] for f in FIXTURES])
def test_fixture_is_classified_as_its_type(expected, name, build):
    parsed = parse_document(build(), name)
    assert parsed.document.status == "ok", parsed.document.reason
    c = classify(parsed, CFG.thresholds, CFG.overrides)
    assert c.doc_type == expected, c
    assert c.reason.strip() and "\n" not in c.reason


def test_override_glob_forces_the_type():
    parsed = parse_document(prose_md(), "corpus/faq/harbour.md")
    overrides = ({"glob": "*/faq/*", "type": "faq"},)
    c = classify(parsed, CFG.thresholds, overrides)
    assert c.doc_type == "faq" and "*/faq/*" in c.reason
    assert classify(parsed, CFG.thresholds, ({"glob": "other/*", "type": "faq"},)).doc_type == "prose"


def test_override_from_the_yaml_file(tmp_path):
    text = DEFAULT_DOC_TYPES.read_text().replace(
        "overrides: []", 'overrides:\n  - {glob: "*.md", type: reference}'
    )
    path = tmp_path / "doc_types.yaml"
    path.write_text(text)
    cfg = load_doc_types(path)
    assert cfg.overrides == ({"glob": "*.md", "type": "reference"},)
    assert classify(parse_document(prose_md(), "harbour.md"), cfg.thresholds, cfg.overrides).doc_type == (
        "reference"
    )


def _bad_config(tmp_path, old: str, new: str):
    text = DEFAULT_DOC_TYPES.read_text()
    assert old in text
    path = tmp_path / "doc_types.yaml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ConfigError) as e:
        load_doc_types(path)
    return str(e.value)


def test_config_rejects_an_unknown_type(tmp_path):
    msg = _bad_config(tmp_path, "  slides:", "  posters:\n    {strategy: structure}\n  slides:")
    assert "types.posters" in msg and "slides" in msg


def test_config_rejects_an_unknown_profile_key(tmp_path):
    msg = _bad_config(tmp_path, "{strategy: records, max_tokens: 250}", "{strategy: records, max_token: 250}")
    assert "types.faq.max_token" in msg and "max_tokens" in msg


def test_config_rejects_a_missing_threshold(tmp_path):
    msg = _bad_config(tmp_path, "  faq_share: 0.5 ", "  # faq_share removed ")
    assert "thresholds.faq_share" in msg


def test_config_rejects_an_override_of_an_unknown_type(tmp_path):
    msg = _bad_config(tmp_path, "overrides: []", 'overrides:\n  - {glob: "*.md", type: novel}')
    assert "overrides[0]" in msg and "novel" in msg


@pytest.mark.parametrize(
    ("name", "source"),
    [
        (
            "message.html",
            "<h1>message</h1><p>Log a message.</p><dl>"
            + "".join(
                f"<dt>{mode}</dt><dd>{what} message, printed to stderr.</dd>"
                for mode, what in [
                    ("FATAL_ERROR", "A fatal"),
                    ("SEND_ERROR", "An error"),
                    ("WARNING", "A warning"),
                    ("AUTHOR_WARNING", "An author warning"),
                    ("DEPRECATION", "A deprecation"),
                    ("NOTICE", "An important"),
                    ("STATUS", "A status"),
                    ("VERBOSE", "A detailed"),
                ]
            )
            + "</dl>",
        ),
        (
            "message.rst",
            "message\n=======\n\nLog a message.\n\n"
            + "".join(
                f"``{mode}``\n  {mode.title()} message, printed to stderr.\n\n"
                for mode in [
                    "FATAL_ERROR",
                    "SEND_ERROR",
                    "WARNING",
                    "AUTHOR_WARNING",
                    "DEPRECATION",
                    "NOTICE",
                ]
            ),
        ),
    ],
)
def test_a_definition_list_is_no_transcript(name, source):
    """A definition reads ``Term: definition``, which looks like a speaker's turn: CMake's ``message``
    page, its eight modes defined one after another, was a transcript and chunked in fixed windows.
    A speaker speaks more than once; a term is defined once."""
    parsed = parse_document(source.encode(), name)
    assert sum(b.text.startswith(("FATAL_ERROR: ", "WARNING: ")) for b in parsed.blocks) == 2
    c = classify(parsed, CFG.thresholds, CFG.overrides)
    assert c.doc_type != "transcript", c
    assert c.features.speaker_turns == 0


def test_labels_in_a_sectioned_manual_are_no_speakers():
    """Texinfo's HTML (nettle's manual) opens each definition with ``Function: ...``: 801 such
    paragraphs under 117 headings made the manual a transcript, chunked in fixed windows past its
    sections. A transcript has no sections to speak of."""
    sections = []
    for n in range(8):
        defs = "".join(
            f"<p>Function: void sha{n}_{op} (struct sha{n}_ctx *ctx)</p>"
            f"<p>Constant: SHA{n}_{op.upper()}_SIZE</p>"
            for op in ("init", "update", "digest")
        )
        sections.append(f"<h2>{n} Hash function SHA{n}</h2><p>SHA{n} is a hash function.</p>{defs}")
    parsed = parse_document(f"<h1>Nettle</h1>{''.join(sections)}".encode(), "nettle.html")
    c = classify(parsed, CFG.thresholds, CFG.overrides)
    assert c.features.speaker_turns >= 40 and c.features.speaker_share > 0.8  # they still look like turns
    assert c.doc_type != "transcript", c
    # the same turns with no sections make a transcript, as before
    flat = parse_document(f"<p>Nettle</p>{''.join(s.split('</h2>')[1] for s in sections)}".encode(), "n.html")
    assert classify(flat, CFG.thresholds, CFG.overrides).doc_type == "transcript"


def test_words_are_counted_a_million_characters_at_a_time():
    """A 76 MB table (886k rows) held its 17 million words as strings at once to count them, and
    went over the document memory limit; counted a group of blocks at a time, the count is the one
    the whole text gives, a block boundary never joining two words."""
    import re

    from raychunk.classify import _WORD, features

    rows = "".join(f"pkg-{i}\t{i}.0\tA package number {i}, for tests\n" for i in range(60_000))
    doc = parse_document(("name\tversion\tsummary\n" + rows).encode(), "big.tsv")
    assert len(doc.blocks) == 60_000 and sum(len(b.text) for b in doc.blocks) > 2 * (1 << 20)
    whole = len(_WORD.findall("\n".join(b.text for b in doc.blocks)))
    assert features(doc).words == whole and whole > 60_000 * 10
    assert re.sub(r"\s", "", doc.blocks[0].text).endswith("fortests")
