"""Response pieces that carry words as codes with parameters: a warning (its English `message` rendered from them by
app/text/messages.py) and an assumption (app/estimator/notes.py, app/text/messages.py ASSUMPTIONS), which the pages word
in their language."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.estimator.specs import WarningCode


def code_params(description: str) -> Any:
    """The field of a coded text's figures and names by name (a warning's, a note's, a rejection's), `description`
    its own: none unless it has some."""
    return Field(default_factory=dict, description=description)


class WarningOut(BaseModel):
    code: WarningCode
    message: str = Field(description="In English: `code` and `params` worded by app/text/messages.py")
    params: dict[str, Any] = code_params(
        "The figures and names of the warning by name (e.g. pipeline_bubble: bubble, the idle share of "
        "a step); app/text/messages.py words code and params in English and Chinese, as the web pages show them",
    )


class NoteOut(BaseModel):
    code: str = Field(description="An assumption's stable code (app/estimator/notes.py words it in English)")
    params: dict[str, Any] = code_params("The figures its text carries")
