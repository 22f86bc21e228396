"""``budgets/<org>/.../<node>/budget.yaml``: one node's owners and the split among its children.

The split among N's children lives in N's own file, so a change to it is a change to a file N's
owners own.  A leaf (no ``children``) lists its ``members`` instead.
"""

from __future__ import annotations

import datetime as dt

from pydantic import Field

from allotment.config.models.common import Name, Owner, Strict, Text, UserName


class ChildEntry(Strict):
    """One child's terms, as set by its parent's owners."""

    share: float = Field(gt=0, description="Weight among siblings; normalized to percentages.")
    clusters: list[Name] | None = Field(
        default=None, description="Restrict this child (and its subtree) to these clusters."
    )
    start: dt.date | None = Field(default=None, description="First day the budget is active.")
    end: dt.date | None = Field(default=None, description="Last day the budget is active.")
    max_gpus: int | None = Field(default=None, gt=0, description="Cap on concurrent GPUs.")
    description: Text | None = Field(default=None, description="Free text.")


class BudgetFile(Strict):
    """A node of the budget tree; the folder name is the node's name."""

    owners: list[Owner] = Field(
        default_factory=list,
        description="Who approves changes at and under this node: e-mails, optionally @handles.",
    )
    description: Text | None = Field(default=None, description="Free text.")
    children: dict[Name, ChildEntry] = Field(
        default_factory=dict, description="Each child (a sub-folder) and its terms."
    )
    members: list[UserName] = Field(
        default_factory=list, description="Users who charge to this leaf (leaves only)."
    )
    default_for: list[UserName] = Field(
        default_factory=list,
        description="Members in several leaves for whom this leaf is the default account.",
    )
