"""Rendering the reports, one module per job: ``run``, ``price`` and ``eval`` (text, markdown, CSV
and PNG). What a report holds is computed by its job (or by ``pricing`` / ``evaluation``); a new
report field is rendered in its job's module here."""

from raychunk.report.eval import plot_eval, render_eval_markdown, render_eval_text, write_eval
from raychunk.report.price import plot_price, render_price_markdown, render_price_text, write_price_csv
from raychunk.report.run import render_run_markdown, render_run_text

__all__ = [
    "plot_eval",
    "plot_price",
    "render_eval_markdown",
    "render_eval_text",
    "render_price_markdown",
    "render_price_text",
    "render_run_markdown",
    "render_run_text",
    "write_eval",
    "write_price_csv",
]
