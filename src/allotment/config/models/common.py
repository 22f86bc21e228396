"""Field types shared by every file kind, each with a pattern so the schema and the code agree."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from allotment.durations import DURATION_PATTERN, parse_duration

NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,39}$"
USER_PATTERN = r"^[a-z_][a-z0-9_.-]{0,31}$"
EMAIL_PATTERN = r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$"
HANDLE_PATTERN = r"^@[A-Za-z0-9](-?[A-Za-z0-9]){0,38}$"
OWNER_PATTERN = f"({EMAIL_PATTERN})|({HANDLE_PATTERN})"


class Strict(BaseModel):
    """Base of every config model: unknown keys are errors, values never change after loading,
    and no silent coercion ("40" is not a number)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _check_duration(text: str) -> str:
    parse_duration(text)  # raises ValueError with a message fit for the user
    return text


# A name of a budget node, cluster or GPU type: lowercase, usable as a Slurm account name.
Name = Annotated[str, Field(pattern=NAME_PATTERN, max_length=40)]
# A Unix / Slurm user name.
UserName = Annotated[str, Field(pattern=USER_PATTERN, max_length=32)]
# An owner: an e-mail address (what approvals and CODEOWNERS match) or a GitHub handle.
Owner = Annotated[str, Field(pattern=OWNER_PATTERN, max_length=254)]
# A duration written like 90s, 15m, 8h, 7d or 1h30m.
Duration = Annotated[
    str,
    Field(json_schema_extra={"pattern": DURATION_PATTERN}, max_length=32),
    AfterValidator(_check_duration),
]
Text = Annotated[str, Field(max_length=2000)]
