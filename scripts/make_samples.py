"""Regenerate the binary files of the sample corpus (PDF, DOCX, PPTX, EML) from the text below.

    python scripts/make_samples.py

The outputs are committed, so nobody needs to run this unless the text changes. Output is
deterministic apart from the timestamps the Office formats embed.
"""

from __future__ import annotations

import email.message
import email.utils
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

SLA = [
    ("h1", "Acme Cloud Service Level Agreement"),
    (
        "p",
        "This agreement sets out the availability Acme Cloud commits to for paid workspaces, and the "
        "service credits a customer receives when that commitment is missed. It applies to the Pro "
        "and Enterprise plans.",
    ),
    ("h2", "1. Availability commitment"),
    (
        "p",
        "Acme Cloud will be available at least 99.9 percent of the time in each calendar month, "
        "measured at the API gateway. Scheduled maintenance announced at least five days ahead does "
        "not count as downtime, and is limited to four hours per month.",
    ),
    ("h2", "2. Service credits"),
    (
        "p",
        "When monthly availability falls below the commitment, the customer receives a credit on the "
        "next invoice, as a share of that month's subscription fee:",
    ),
    (
        "table",
        [
            ("Monthly availability", "Credit (Pro)", "Credit (Enterprise)"),
            ("99.0% to 99.9%", "10%", "15%"),
            ("95.0% to 99.0%", "25%", "35%"),
            ("below 95.0%", "50%", "100%"),
        ],
    ),
    (
        "p",
        "Credits must be claimed within 30 days of the end of the affected month, through the support "
        "portal. Credits are the customer's sole remedy for missed availability.",
    ),
    ("h2", "3. Exclusions"),
    (
        "p",
        "The commitment does not cover outages caused by the customer's own network, by a proxy that "
        "intercepts TLS traffic to Acme Cloud, or by use of the deprecated API version 1.",
    ),
    ("h2", "4. Support response"),
    (
        "p",
        "Enterprise customers can open a priority-one ticket at any hour. Acme Cloud responds to a "
        "priority-one ticket within one hour and gives updates every two hours until the issue is "
        "resolved. Other plans receive responses within the times listed in the support plan table.",
    ),
    ("h2", "5. Changes to this agreement"),
    (
        "p",
        "Acme Cloud may change this agreement with 90 days' notice. A change never reduces the credits "
        "of a billing period that has already started.",
    ),
]


def make_pdf(path: Path) -> None:
    """A two-page A5 report laid out by hand: headings by font size, a ruled table, a footer."""
    import pymupdf

    doc = pymupdf.open()
    width, height, margin = 420, 595, 40
    page, y = None, height
    fonts = {"h1": ("hebo", 16), "h2": ("hebo", 12), "p": ("helv", 10)}

    def new_page():
        nonlocal page, y
        page = doc.new_page(width=width, height=height)
        y = margin + 10

    for kind, content in SLA:
        if kind == "table":
            row_h, col_w = 18, (width - 2 * margin) / 3
            if y + row_h * len(content) > height - 60:
                new_page()
            for r, row in enumerate(content):
                for c, cell in enumerate(row):
                    rect = pymupdf.Rect(margin + c * col_w, y, margin + (c + 1) * col_w, y + row_h)
                    page.draw_rect(rect, color=(0, 0, 0), width=0.7)
                    page.insert_text(
                        (rect.x0 + 4, rect.y1 - 5), cell, fontname="hebo" if r == 0 else "helv", fontsize=9
                    )
                y += row_h
            y += 12
            continue
        font, size = fonts[kind]
        lines = max(1, int(pymupdf.get_text_length(content, font, size) // (width - 2 * margin)) + 1)
        box_h = lines * size * 1.35 + 4
        if page is None or y + box_h > height - 60:
            new_page()
        rect = pymupdf.Rect(margin, y, width - margin, y + box_h + size)
        page.insert_textbox(rect, content, fontname=font, fontsize=size)
        y += box_h + (6 if kind == "p" else 4)
    # A running footer and page numbers, as real reports have; the parser must drop them.
    for page in doc:
        page.insert_text((margin, height - 30), "Acme Cloud SLA, version 3", fontsize=8)
        page.insert_text((width - 80, height - 30), f"Page {page.number + 1}", fontsize=8)
    doc.set_metadata({"title": "Acme Cloud Service Level Agreement", "author": "Acme Cloud Legal"})
    doc.save(path, garbage=3, deflate=True, no_new_id=True)


def make_docx(path: Path) -> None:
    import docx

    d = docx.Document()
    d.core_properties.title = "New Employee Onboarding"
    d.add_heading("New Employee Onboarding", level=1)
    d.add_paragraph("Welcome to Acme Cloud. This checklist covers your first two weeks.")
    d.add_heading("First day", level=2)
    for item in (
        "Collect your laptop from IT and enrol it in device management.",
        "Enable two-factor authentication on your Acme Cloud account.",
        "Join the #platform and #announcements channels.",
    ):
        d.add_paragraph(item, style="List Bullet")
    d.add_heading("Accounts and access", level=2)
    d.add_paragraph(
        "Production access is granted after the security training, usually on day three. "
        "Request it through the access portal; your manager approves it."
    )
    table = d.add_table(rows=1, cols=3)
    for cell, text in zip(table.rows[0].cells, ("System", "Who grants access", "When")):
        cell.text = text
    for row in (
        ("Admin console", "Team lead", "Day 1"),
        ("Production databases", "Security team", "Day 3"),
        ("Billing system", "Finance", "On request"),
    ):
        cells = table.add_row().cells
        for cell, text in zip(cells, row):
            cell.text = text
    d.add_heading("Second week", level=2)
    d.add_paragraph("Shadow an on-call engineer for one shift and read the security incident runbook.")
    d.save(path)


def make_pptx(path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[1])
    slide.shapes.title.text = "Q3 2026 Platform Review"
    body = slide.placeholders[1].text_frame
    body.text = "Sync agent 4.2 shipped to 60% of gateways"
    for line in (
        "Upload speed on unstable links up to 3x faster",
        "Rollout paused in Frankfurt (error AC-4031)",
    ):
        body.add_paragraph().text = line
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Storage and backups"
    rows = (
        ("Metric", "Q2", "Q3"),
        ("Stored data (PB)", "4.1", "4.6"),
        ("Backup retention (days)", "35", "35"),
    )
    shape = slide.shapes.add_table(3, 3, Inches(0.5), Inches(1.5), Inches(9), Inches(1.5))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            shape.table.cell(r, c).text = text
    prs.save(path)


def make_eml(path: Path) -> None:
    msg = email.message.EmailMessage()
    msg["From"] = "Lena Fischer <lena@acme-cloud.example>"
    msg["To"] = "platform-team@acme-cloud.example"
    msg["Subject"] = "Backup retention stays at 35 days"
    msg["Date"] = email.utils.format_datetime(
        email.utils.parsedate_to_datetime("Tue, 18 Nov 2026 09:30:00 +0000")
    )
    msg["Message-ID"] = "<retention-2026-11-18@acme-cloud.example>"
    msg.set_content(
        "Hi all,\n\n"
        "After yesterday's standup we decided to keep backup retention at 35 days for every plan.\n"
        "Ninety-day retention will be sold as an Enterprise add-on, because it would triple the\n"
        "backup storage bill if we gave it to everyone.\n\n"
        "Sales will announce the add-on in January.\n\n"
        "Lena\n"
    )
    path.write_bytes(bytes(msg))


if __name__ == "__main__":
    make_pdf(SAMPLES / "acme-sla.pdf")
    make_docx(SAMPLES / "onboarding-checklist.docx")
    make_pptx(SAMPLES / "q3-platform-review.pptx")
    make_eml(SAMPLES / "retention-decision.eml")
    print(
        "wrote",
        ", ".join(
            p.name for p in sorted(SAMPLES.iterdir()) if p.suffix in {".pdf", ".docx", ".pptx", ".eml"}
        ),
    )
