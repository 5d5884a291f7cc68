"""Questions an honest agent asks, each of which got a reply that misled it (honest-agent pass)."""

import pytest

from shopgen.env.user import SimulatedUser, compile_script, match_slots
from shopgen.gen.tasks.constraints import PRIORITY_WORDS
from shopgen.schemas.task import ScriptSlot, ScriptSwitch, UserScript


def _slot(name, value, kind="text", label="item", omitted=False, keywords=()):
    return ScriptSlot(
        name=name, value=value, kind=kind, label=label, omitted=omitted, keywords=list(keywords)
    )


def _asked(slots: list[ScriptSlot], question: str) -> list[str]:
    compiled = compile_script(UserScript(style="polite", slots=slots).model_dump_json())
    return [s.name for s in match_slots(compiled, question)]


PRIORITY = _slot(  # as the generators state it (``constraints.preference_fact``)
    "priority",
    'fast delivery (very much), then my favourite brands "Jones & Sons" and "Jackson" (a little)',
    "preference",
    "priority order",
    keywords=PRIORITY_WORDS,
)
DISCOVERY = [
    _slot("category", "socks", label="kind of product"),
    _slot("price_max", 23, "money", "budget"),
    PRIORITY,
]


@pytest.mark.parametrize(
    "question",
    ["What are you looking for?", "What product are you shopping for?", "What do you need?"],
)
def test_a_discovery_customer_says_what_they_are_looking_for(question):
    assert _asked(DISCOVERY, question) == ["category"]


def test_a_policy_items_category_is_not_what_the_customer_is_looking_for():
    policy = [_slot("category", "televisions", label="product category")]
    assert _asked(policy, "What are you looking for?") == []


@pytest.mark.parametrize(
    "question",
    ["Do you have a preferred brand?", "Any particular brand?", "Any specific brand in mind?"],
)
def test_favourite_brands_are_said_when_asked_for_a_preferred_brand(question):
    assert "priority" in _asked(DISCOVERY, question)


@pytest.mark.parametrize("question", ["Do you need it fast?", "Are you in a hurry?"])
def test_how_fast_they_need_it_is_said(question):
    """The delivery limit and the preference (fast delivery very much) said how fast; asked
    whether they need it fast, the customer said "I'm not sure"."""
    slots = [*DISCOVERY, _slot("ship_days_max", 3, "days", "delivery time")]
    assert {"ship_days_max", "priority"} <= set(_asked(slots, question))


def test_each_time_seen_names_its_item():
    """ "When did you look at them?" got four times and no item: which was whose?"""
    slots = [
        _slot("items.0.desc", "throw"),
        _slot("items.0.seen", "three days ago", "when", "when I looked at it"),
        _slot("items.1.desc", "dog toy"),
        _slot("items.1.seen", "last week", "when", "when I looked at it"),
    ]
    text = UserScript(style="terse", slots=slots).model_dump_json()
    reply = SimulatedUser(compile_script(text), "cart", 0, "t").reply(
        "When did you look at them?", 1
    )["reply"]
    assert "the throw I looked at three days ago" in reply
    assert "the dog toy I looked at last week" in reply


RETURNS = [
    _slot("item", "sports bottle"),
    _slot("order_ref", "221-0062150-4905723", "order_ref", "order number"),
]


def test_a_yes_no_question_about_the_item_gets_no_echo_of_it():
    """ "Is the item unopened?" got "Yes, the item is sports bottle", which reads as a yes."""
    assert _asked(RETURNS, "Is the item unopened?") == []
    condition = _slot("condition", "unopened", label="item condition")
    assert _asked([*RETURNS, condition], "Is the item unopened?") == ["condition"]


@pytest.mark.parametrize(
    "question",
    ["Which item do you want to return?", "What's the item?", "Can you tell me the item?"],
)
def test_asked_which_item_the_customer_still_names_it(question):
    assert _asked(RETURNS, question) == ["item"]


def test_a_status_customer_says_what_they_want_to_know():
    slots = [
        _slot("want", "carrier", "choice", "thing I need"),
        _slot("order_ref", "732-0096541-3450738", "order_ref", "order number"),
    ]
    assert _asked(slots, "What would you like to know about it?") == ["want"]


def test_listing_everything_in_a_journey_names_every_request():
    """Only the cart's and bundle's items were listed: the policy question went unsaid."""
    slots = [
        _slot("steps.0.goal", "how much shipping costs"),
        _slot("steps.1.goal", "the desk lamp"),
        _slot("steps.1.items.0.desc", "desk lamp"),
        _slot("steps.2.goal", "dorm room"),
        _slot("steps.2.must.0", "desk chair", label="must-have"),
    ]
    got = set(_asked(slots, "Can you list everything again?"))
    assert {"steps.0.goal", "steps.1.items.0.desc", "steps.2.goal"} <= got
    # The cart step's goal restates its item: said once, not twice.
    assert "steps.1.goal" not in got


# -- a customer audit: questions answered with the wrong fact or with nothing ---------------------


@pytest.mark.parametrize(
    "question", ["Which brand do you want?", "How soon do you need it delivered?"]
)
def test_brand_and_speed_questions_get_the_priorities_when_no_limit_is_held(question):
    """With no brand or delivery limit, the favourite brands and the weight of speed are the
    answer; "I'm not sure" hid them (123 and 48 of 130 discovery tasks)."""
    assert _asked(DISCOVERY, question) == ["priority"]
    # A held limit is the answer, the priorities are not added to it.
    slots = [*DISCOVERY, _slot("brand", "Jackson", "text", "brand")]
    assert _asked(slots, "Which brand do you want?") == ["brand"]


def test_the_delivery_state_is_not_the_items_condition():
    """ "State" alone asks where it ships: the item's condition answered it (48 of 48)."""
    condition = _slot("condition", "opened", "choice", "item condition", keywords=["condition"])
    state = _slot("state", "NY", "choice", "delivery state", keywords=["state", "ship to"])
    assert _asked([condition], "Which state is it shipping to?") == []
    assert _asked([condition], "What state is the item in?") == ["condition"]
    assert _asked([state], "Which state is it shipping to?") == ["state"]


@pytest.mark.parametrize(
    ("question", "must"),
    [
        ("When do you need it by?", False),
        ("Do you need it gift-wrapped?", False),
        ("What do you need?", True),
        ("What else do you need?", True),
        ("Which items do you need for the project?", True),
    ],
)
def test_a_projects_must_haves_answer_what_is_needed_not_whether_or_when(question, must):
    slots = [
        _slot("project", "home office", label="project"),
        _slot("must.0", "desk lamp", label="must-have"),
    ]
    assert ("must.0" in _asked(slots, question)) is must


def test_a_quantity_asked_of_a_swapped_item_names_the_item_that_replaced_it():
    """After "brush heads instead of the paper", "How many of the paper?" got "the quantity
    is 4", which an agent could add as 4 packs of paper."""
    slots = [
        _slot("items.0.desc", "copy paper"),
        _slot("items.0.qty", 4, "quantity", "quantity"),
        _slot("items.1.desc", "desk lamp"),
        _slot("items.1.qty", 1, "quantity", "quantity"),
    ]
    switch = ScriptSwitch(kind="swap_item", turn=1, changes=[("items.0.desc", "brush heads")])
    text = UserScript(style="terse", slots=slots, switch=switch).model_dump_json()
    user = SimulatedUser(compile_script(text), "cart", 0, "t")
    assert "brush heads instead of the copy paper" in user.reply("Anything else?", 1)["reply"]
    assert (
        "4 for the brush heads" in user.reply("How many copy paper packs do you want?", 2)["reply"]
    )
    # An item no change of mind touched is answered as before.
    assert "for the" not in user.reply("How many desk lamps do you want?", 3)["reply"]


# -- a second customer audit (26,938 asks on 780 tasks of five environments) ----------------------


@pytest.mark.parametrize(
    "question", ["Do you want just one of the desk lamps?", "Is one desk lamp enough?"]
)
def test_a_proposed_count_gets_the_quantity(question):
    """ "I don't know" to 512 of 518 such cart and journey asks."""
    slots = [_slot("items.0.desc", "desk lamp"), _slot("items.0.qty", 3, "quantity", "quantity")]
    assert _asked(slots, question) == ["items.0.qty"]


POLICY = [
    _slot("tier", "gold", "choice", "membership tier"),
    _slot("category", "headphones", label="product category", keywords=["product"]),
    _slot("state", "NY", "choice", "delivery state", keywords=["state", "ship to"]),
]


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What kind of account do you have with us?", ["tier"]),  # got the category (139)
        ("Where is the order being delivered?", ["state"]),  # "I'm not sure" (81)
        ("How many did you buy?", []),  # got the category (123): no quantity is held
        ("What did you buy?", ["category"]),
    ],
)
def test_a_policy_customer_answers_what_is_asked(question, asked):
    assert _asked(POLICY, question) == asked


SHIPPED = [
    *POLICY,
    _slot("ship_method", "expedited shipping", "choice", "shipping method", keywords=["shipping"]),
]


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        # A "to" after "shipping" asks where: these got the shipping method too (11 of 60).
        ("What state is it shipping to?", ["state"]),
        ("Where are you shipping it?", ["state"]),
        # "How" asks the method, though "being shipped" asks where elsewhere (got the state).
        ("How is it being shipped?", ["ship_method"]),
        ("Where is it being shipped?", ["state"]),
        ("What shipping method did you choose?", ["ship_method"]),
    ],
)
def test_where_it_ships_and_how_it_ships_are_told_apart(question, asked):
    assert _asked(SHIPPED, question) == asked


@pytest.mark.parametrize(
    "question", ["Delivering to which state?", "What state is it shipping to?"]
)
def test_where_it_is_delivered_is_no_question_of_delivery_time(question):
    """A discovery customer got these as the delivery time they need (26 of 40 tasks)."""
    days = _slot("ship_days_max", 3, "days", "delivery time")
    assert _asked([*DISCOVERY, days], question) == []


def test_when_an_order_was_made_is_no_question_of_the_brand():
    """ "When did you make the order?" got a discovery step's brand by "make"."""
    brand = _slot("brand", "Jackson", "brand", "brand")
    assert _asked([*DISCOVERY, brand], "When did you make the order?") == []


RETURN = [
    _slot("item", "jeans", label="item"),
    _slot("action", "exchange", "choice", "return or exchange"),
    _slot("method", "drop_off", "choice", "return method", keywords=["return method"]),
]


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What condition is the item in?", []),  # got the item (131): no condition is held
        ("Are you looking for a replacement or a refund?", ["action"]),  # and the item (156)
        ("What shipping method did you choose?", []),  # got the return method
        ("Which method would you like?", ["method"]),
    ],
)
def test_a_returns_customer_answers_what_is_asked(question, asked):
    assert _asked(RETURN, question) == asked


def test_a_joined_question_about_one_item_takes_nothing_of_another_item():
    """ "Which lounge set do you mean? When did you look at it?" got when the body wash was
    looked at (94 of 336 cart asks): the lounge set was never looked at."""
    slots = [
        _slot("items.0.desc", "lounge set"),
        _slot("items.1.desc", "body wash"),
        _slot("items.1.seen", "two days ago", "when", "when I looked at it"),
    ]
    question = "Which lounge set do you mean? When did you look at it?"
    assert "items.1.seen" not in _asked(slots, question)
    assert _asked(slots, "Which body wash do you mean? When did you look at it?") == [
        "items.1.seen"
    ]


def test_a_journeys_policy_question_and_status_want_are_asked_as_their_own_environments():
    """ "What's your question?" got "I don't know" (101 of 101 journeys with a policy step),
    "What would you like to know about the order?" the order number (53 of 69)."""
    slots = [
        _slot("steps.0.verb", "ask about", "choice", "step"),
        _slot("steps.0.goal", "how long I have to return an item", label="item"),
        _slot("steps.1.verb", "check on", "choice", "step"),
        _slot("steps.1.goal", "my order (delivery date)", label="item"),
        _slot("steps.1.ref", "123-4567890-1234567", "order_ref", "order number"),
    ]
    assert _asked(slots, "What's your question?") == ["steps.0.goal"]
    # What they want to know, besides the order it is about.
    assert "steps.1.goal" in _asked(slots, "What would you like to know about the order?")


# -- a third customer audit (the same bank, this release's newest session) -----------------------

JOURNEY = [
    _slot("steps.0.verb", "sort out a return for", "choice", "step"),
    _slot("steps.0.goal", "the tape measure", label="item"),
    _slot("steps.0.order_date", "February 27", "date", "order date"),
    _slot("steps.1.verb", "ask about", "choice", "step"),
    _slot("steps.1.goal", "how much shipping costs", label="item"),
    _slot("steps.2.verb", "add to my cart", "choice", "step"),
    _slot("steps.2.goal", "the swaddle blankets", label="item"),
    _slot("steps.2.items.0.desc", "swaddle blankets"),
    _slot("steps.2.items.0.qty", 2, "quantity", "quantity"),
]


def test_a_journey_goal_is_called_what_its_step_asks_for():
    """ "How big is the item?" got "the item is how much shipping costs" (101 of 101 journeys
    holding a policy step): every step's goal was labelled "item"."""
    compiled = compile_script(UserScript(style="polite", slots=JOURNEY).model_dump_json())
    labels = {m.slot.name: m.slot.label for m in compiled.matchers}
    assert labels["steps.1.goal"] == "question"
    assert labels["steps.0.goal"] == "item"  # a return's goal is its item
    assert "steps.1.goal" not in _asked(JOURNEY, "What item did you order?")


def test_the_cart_is_named_by_its_step_and_its_goal_is_not_said_twice():
    """ "Which items should I add to the cart?" got the other steps' goals and the cart's item
    twice (69 of 69 journeys holding a cart step)."""
    assert _asked(JOURNEY, "Which items should I add to the cart?") == ["steps.2.items.0.desc"]


@pytest.mark.parametrize(
    "question",
    [
        # "when did you" is the order date's, inside "when did you look" (91 of 182).
        "Which swaddle blankets do you mean? When did you look at it?",
        # "how many" is the quantity's, inside "how many days" (93 of 123).
        "How many days ago did it arrive?",
    ],
)
def test_a_phrase_inside_a_longer_one_asking_another_fact_asks_nothing(question):
    assert _asked(JOURNEY, question) == []


def test_question_words_around_a_phrase_do_not_make_it_another_facts():
    """ "What item" and "brand preference" ask for the item and the brand still."""
    assert _asked(RETURN, "What item is it?") == ["item"]
    assert "brand" in _asked([_slot("brand", "Jackson", label="brand")], "Any brand preference?")


def test_a_fact_asked_of_the_item_does_not_say_the_item_back():
    """ "What condition is the item in?" got "the item is earrings and the item condition is
    opened" (25 of 25 returns customers holding a condition)."""
    condition = _slot("condition", "opened", "choice", "item condition")
    assert _asked([*RETURN, condition], "What condition is the item in?") == ["condition"]


@pytest.mark.parametrize(
    "question",
    [
        "Can you help me find the order? Anything like a date or the total?",
        "Could you help me locate your order?",
    ],
)
def test_a_detail_telling_the_order_apart_answers_a_request_to_find_it(question):
    """ "I'm not sure" from 110 of 156 returns and 73 of 156 status customers holding one."""
    hint = _slot("order_hint", "the cheapest one", "order_ref", "order I mean")
    assert _asked([*RETURN, hint], question) == ["order_hint"]


def test_a_count_of_units_or_of_each_is_no_count_of_options():
    """ "How many units are you ordering?", "How many of each?": a journey discovery step's
    count of options (48 of 101 each)."""
    slots = [
        _slot("steps.0.k_rec", 3, "count", "number of options"),
        _slot("steps.1.items.0.desc", "desk lamp"),
        _slot("steps.1.items.0.qty", 2, "quantity", "quantity"),
    ]
    assert _asked(slots, "How many of each?") == ["steps.1.items.0.qty"]
    assert "steps.0.k_rec" not in _asked(slots, "How many units are you ordering?")


# -- a paraphrase bank: 486 agents' questions written apart from the customer -------------------
# Six wordings of each of the audit bank's 81 questions. Asks answered with "I don't know", the
# wrong fact or more than asked: 12.6% before, 7.7% after (the bank's own wordings: 1,491
# before, 1,462 after, no reply worse).

CART = [
    _slot("items.0.desc", "desk lamp"),
    _slot("items.0.qty", 3, "quantity", "quantity"),
]
STATUS = [
    _slot("order_ref", "356-0030617-0101557", label="order number"),
    _slot("want", "status and tracking", label="thing I need"),
]
POLICY_FACTS = [
    *POLICY,
    _slot("ship_method", "expedited shipping", "choice", "shipping method"),
    _slot("quantity", 5, "quantity", "quantity"),
    _slot("topic", "how much shipping costs", label="question"),
]


@pytest.mark.parametrize(
    ("slots", "question", "asked"),
    [
        (CART, "Do you only need one of the desk lamps?", ["items.0.qty"]),
        (CART, "One desk lamp, or more?", ["items.0.qty"]),
        (CART, "Is one desk lamp sufficient, or do you need several?", ["items.0.qty"]),
        (CART, "Would one desk lamp do, or should I add more?", ["items.0.qty"]),
        (CART, "What would you like me to add to your cart?", ["items.0.desc"]),
        (CART, "What should I put in your cart?", ["items.0.desc"]),
        (CART, "What did you need again?", ["items.0.desc"]),
        (STATUS, "Carrier too?", ["want"]),
        (STATUS, "Should I tell you the carrier as well?", ["want"]),
        (STATUS, "What info do you need from me?", ["want"]),
        (POLICY_FACTS, "What would you like to ask?", ["topic"]),
        (POLICY_FACTS, "What sort of product are we talking about?", ["category"]),
        (POLICY_FACTS, "What sort of membership or account do you have?", ["tier"]),
        (POLICY_FACTS, "What kind of shipping did you go with?", ["ship_method"]),
        (POLICY_FACTS, "How many did you purchase?", ["quantity"]),
        (POLICY_FACTS, "Where are we shipping this order to?", ["state"]),
        (RETURN, "How would you prefer to return it?", ["method"]),
        (RETURN, "What did you order?", ["item"]),
        # "happen" is no "What happened?": the reason too (156 of 156 returns asks).
        (STATUS, "Do you happen to have the order number handy?", ["order_ref"]),
    ],
)
def test_questions_as_other_agents_word_them(slots, question, asked):
    assert _asked(slots, question) == asked


def test_why_sending_it_back_asks_the_reason_not_the_method():
    """ "Why do you want to send it back?" got the return method too (213 of 215 asks)."""
    slots = [*RETURN, _slot("reason", "changed my mind", "choice", "reason")]
    assert _asked(slots, "Why do you want to send it back?") == ["reason"]


@pytest.mark.parametrize(
    "question", ["Is that all?", "Will that be all?", "Anything more I need to know?"]
)
def test_an_open_ask_gets_asked_what_is_wanted(question):
    """ "No idea" told the agent nothing more was to be known (713 of 780 asks for the first two)."""
    compiled = compile_script(UserScript(style="polite", slots=RETURN).model_dump_json())
    assert compiled.answerable(question, False).open_ask


# -- a second bank of agents' questions written apart from the customer ----------------------


BANK_SCRIPTS = {
    "discovery": [*DISCOVERY, _slot("k_rec", 3, "count", "number of options")],
    "days": [*DISCOVERY, _slot("ship_days_max", 3, "days", "delivery time")],
    "cart": [
        _slot("items.0.desc", "wool socks"),
        _slot("items.0.qty", 2, "quantity", "quantity"),
        _slot("items.0.seen", "yesterday", "text", "when I looked at it"),
    ],
    "returns": [
        *RETURN,
        _slot("reason", "it arrived damaged", label="reason for the return"),
        _slot("condition", "opened", "choice", "item condition", keywords=["condition"]),
    ],
    "policy": [
        _slot("topic", "the restocking fee on a return", label="question"),
        _slot("category", "headphones", label="product category", keywords=["product"]),
        _slot("price", 89.99, "money", "item price", keywords=["item price", "unit price"]),
    ],
    "order": [*RETURN, _slot("order_date", "February 14", "date", "order date")],
    "bundle": [
        _slot("project", "home office", label="project"),
        _slot("must.0", "desk lamp", label="must-have"),
        _slot("must.1", "office chair", label="must-have"),
    ],
}


@pytest.mark.parametrize(
    ("script", "question", "asked"),
    [
        ("discovery", "Which factor should I prioritize?", ["priority"]),
        ("discovery", "What's your top consideration?", ["priority"]),
        ("discovery", "How long a shortlist should I put together for you?", ["k_rec"]),
        ("discovery", "Hi there! What can I help you find?", ["category"]),
        ("discovery", "Product type?", ["category"]),
        ("days", "Within how many days does this need to be delivered?", ["ship_days_max"]),
        ("cart", "What should I put in your shopping cart?", ["items.0.desc"]),
        ("cart", "What are you hoping to have in your basket?", ["items.0.desc"]),
        ("cart", "Do you remember around what day you came across this product?", ["items.0.seen"]),
        ("cart", "About how long ago did you see that item?", ["items.0.seen"]),
        ("returns", "What are you looking to send back?", ["item"]),
        ("returns", "What's the most convenient way for you to return it?", ["method"]),
        ("returns", "To arrange the return, how would you like to get the item to us?", ["method"]),
        ("returns", "Why are you returning the item?", ["reason"]),  # and the method (47 of 47)
        ("order", "Got it! About how long ago did you buy this?", ["order_date"]),
        ("returns", "Could you describe the current state of the product?", ["condition"]),
        ("policy", "Which policy would you like to know about?", ["topic"]),
        ("policy", "Which department would this item fall under?", ["category"]),
        ("policy", "Got it! What does that item sell for?", ["price"]),
        ("bundle", "What are you putting together?", ["project"]),
        ("bundle", "Items needed?", ["must.0", "must.1"]),
    ],
)
def test_a_second_bank_of_agents_questions_is_understood(script, question, asked):
    """Each got "I don't know" (or the method besides the reason) on every task holding it."""
    assert _asked(BANK_SCRIPTS[script], question) == asked
