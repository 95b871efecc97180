"""``scripts/call_path.py``: distinct cross-room calls (climbs) and re-entries, a call into a room
already on the stack (A -> B -> A), counted on rooms made here."""

from tests.drivers import load_script


def rooms(source: dict[str, str]) -> dict[str, dict]:
    """Modules' functions compiled under raychunk room names, calling each other through ``R``."""
    made: dict[str, dict] = {}
    for name, code in source.items():
        made[name] = {"__name__": f"raychunk.{name}", "R": made}
        exec(compile(code, f"<{name}>", "exec"), made[name])
    return made


def test_a_call_back_into_a_room_on_the_stack_is_a_reentry_and_a_sideways_one_is_not():
    call_path = load_script("call_path")
    r = rooms(
        {
            "a": "def job():\n    R['b']['step']()\n    R['c']['leaf']()\n\ndef helper():\n    return 1\n",
            "b": "def step():\n    R['c']['leaf']()\n    return R['a']['helper']()\n",
            "c": "def leaf():\n    return 2\n",
        }
    )
    calls = call_path.Calls()
    calls.run(r["a"]["job"])
    assert set(calls.edges) == {
        ("raychunk.a", "job", "raychunk.b", "step"),
        ("raychunk.b", "step", "raychunk.c", "leaf"),
        ("raychunk.b", "step", "raychunk.a", "helper"),
        ("raychunk.a", "job", "raychunk.c", "leaf"),
    }
    assert calls.reentry_lines() == [("b.step -> a.helper", "a > b > a")]
    assert calls.entered == ["raychunk.b", "raychunk.c", "raychunk.a"]
