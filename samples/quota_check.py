"""Check a workspace's storage use against its plan's included storage."""

from dataclasses import dataclass

INCLUDED_GB_PER_SEAT = {"starter": 100, "pro": 1000, "enterprise": 5000}
OVERAGE_PRICE_PER_GB_MONTH = 0.02


@dataclass(frozen=True)
class Workspace:
    name: str
    plan: str
    seats: int
    used_gb: float


def included_storage_gb(ws: Workspace) -> int:
    """Storage included in the plan: a per-seat allowance pooled across the workspace."""
    return INCLUDED_GB_PER_SEAT[ws.plan] * ws.seats


def overage_cost(ws: Workspace) -> float:
    """Monthly cost of the storage used beyond the included amount, in dollars."""
    extra = max(0.0, ws.used_gb - included_storage_gb(ws))
    return round(extra * OVERAGE_PRICE_PER_GB_MONTH, 2)


class QuotaReport:
    """A printable summary for a list of workspaces."""

    def __init__(self, workspaces):
        self.workspaces = list(workspaces)

    def rows(self):
        for ws in self.workspaces:
            yield ws.name, ws.used_gb, included_storage_gb(ws), overage_cost(ws)
