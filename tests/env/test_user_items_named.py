"""A reply stating several items' quantities or variants says which item each is for.

Before, "Which colours?" about a cart of two items was answered "the color is Navy and the
color is Red", and a journey's cart step answered every question about one of its items with
every item's quantity ("the qty is 1, the qty is 2 and the qty is 1"): nothing said which
value was whose, so an honest agent had to guess (cart: 12/30 tasks at d = 6, 30/30 at
d = 12; journey: 9/30 at d = 6, 23/30 at d = 12 held two items whose values differ).
"""

import pytest
from runtime_helpers import call, make_row, result

from shopgen.env.episode import ShopEnv
from shopgen.schemas.task import ScriptSlot, ScriptSwitch, UserScript

SLOTS = [
    ScriptSlot(name="items.0.desc", value="wool socks", kind="text", label="item"),
    ScriptSlot(
        name="items.0.variant.color", value="Navy", kind="variant", label="color", omitted=True
    ),
    ScriptSlot(name="items.0.qty", value=3, kind="quantity", label="quantity", omitted=True),
    ScriptSlot(name="items.1.desc", value="desk lamp", kind="text", label="item"),
    ScriptSlot(
        name="items.1.variant.color", value="Red", kind="variant", label="color", omitted=True
    ),
    ScriptSlot(name="items.1.qty", value=2, kind="quantity", label="quantity", omitted=True),
    ScriptSlot(name="items.2.qty", value=4, kind="quantity", label="quantity", omitted=True),
]


def script(**kw) -> UserScript:
    return UserScript(**{"style": "polite", "slots": SLOTS, "p_short": 0.0, **kw})


@pytest.fixture
def ask(store):
    def start(s: UserScript):
        env = ShopEnv(store)
        row = make_row(store, env="cart", T_max=10, B_tool=5)
        row["user_script"] = s.model_dump_json()
        env.reset(row)

        def asker(question: str) -> str:
            obs, *_ = env.step(call("ask_user", question=question))
            return result(obs)["reply"]

        return asker

    return start


@pytest.mark.parametrize("style", ["polite", "terse", "mobile"])
def test_values_of_two_items_name_their_item(ask, style):
    reply = ask(script(style=style, p_short=1.0 if style != "polite" else 0.0))(
        "Which colours would you like?"
    )
    assert "Navy for the wool socks" in reply
    assert "Red for the desk lamp" in reply


def test_quantities_of_two_items_name_their_item(ask):
    reply = ask(script())("How many of each do you need?")
    assert "3 for the wool socks" in reply
    assert "2 for the desk lamp" in reply


def test_a_question_about_one_item_is_answered_as_before(ask):
    reply = ask(script())("What colour would you like for the desk lamp?")
    assert "Red" in reply
    assert "for the" not in reply
    assert "Navy" not in reply


def test_an_added_item_is_named_once_the_customer_said_it(ask):
    sw = ScriptSwitch(kind="add_item", turn=1, changes=[("items.2.desc", "bird feeder")])
    reply = ask(script(switch=sw))("How many of each do you need?")
    assert "4 for the bird feeder" in reply


#: Two items, only the first sold in colours: a colour question gets one item's value.
ONE_COLOURED = [s for s in SLOTS if s.name != "items.1.variant.color"]


@pytest.mark.parametrize(
    "question",
    [
        "Which colour would you like for the wool socks and the desk lamp?",
        "Which colour would you like?",
    ],
)
@pytest.mark.parametrize("style", ["polite", "terse"])
def test_one_item_s_value_names_it_unless_the_question_named_it_alone(ask, question, style):
    """ "Which colour for the cocktail table and the swimsuit?" got "Black.": the swimsuit's
    colour, which the agent could as well read as the table's (it is sold in Black too)."""
    s = UserScript(style=style, slots=ONE_COLOURED, p_short=1.0 if style == "terse" else 0.0)
    reply = ask(s)(question)
    assert "Navy for the wool socks" in reply
    assert "desk lamp" not in reply


def test_a_possessive_s_names_no_item():
    """A possessive's "s" is no word of an item: "women's boots" was named by "the lamp's"."""
    from shopgen.env.user import compile_script, named_items

    slots = [
        ScriptSlot(name="items.0.desc", value="women's boots", kind="text", label="item"),
        *SLOTS[3:5],
    ]
    compiled = compile_script(script(slots=slots).model_dump_json())
    assert named_items(compiled, "What colour is the desk lamp's shade?") == (1,)
    assert named_items(compiled, "Which colour for the women's boots?") == (0,)
