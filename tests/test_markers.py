"""tests/conftest.py marks a test slow when its code names a process starter: a test of the serving task, whose code
says `serving` as the task, its request block and its response field, starts no process and stays in the fast loop."""

from __future__ import annotations

import inspect

from tests import conftest
from tests.api import test_serving_api
from tests.hostile import test_mixed_currencies


def test_a_serving_request_names_no_process_starter() -> None:
    """Before, tests/servers.py's server starter was called `serving`: every test of test_serving_api.py matched it,
    was marked slow, and `make test-fast` ran none of them (a default split that changed went unseen)."""
    pattern = conftest._module_starters(test_serving_api, {})
    source = inspect.getsource(test_serving_api.test_estimate_serving_offered_load_and_default_split)
    assert "serving" in source and pattern.search(source) is None


def test_a_test_that_starts_the_server_is_still_slow() -> None:
    module = test_mixed_currencies
    source = inspect.getsource(module.test_a_usd_price_is_ranked_at_its_converted_value)
    assert "live_server_factory(" in source and conftest._module_starters(module, {}).search(source) is not None
