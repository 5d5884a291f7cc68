"""policy — "what is your policy on …, in my case?".

Customer wants:
    the store's answer to one policy question (a return window, a fee, a threshold, whether
    something is allowed) for their own situation. The question is drawn for one rule with
    B_branch(d) clauses (its topic uniformly among those that have one); for a number, the
    situation meets the rule or misses one of its clauses, so that another rule with at most
    as many clauses decides, every answer it can so reach equally likely (``missed_rule``).
    The numbers it tests sit on their threshold or a drawn distance to either side. The
    customer states some of the facts the rules test in the first message and leaves others
    out (p_missing), and knows further facts (item condition, the
    reason, the state they ship to) only when asked. A yes/no question's answer is a fair
    coin (``P_YES``): a yes is often the topic's default, which decides only when none of the
    topic's exceptions holds, so every fact they test is needed.
Tools offered:
    policy_search, orders_list, order_get_details, catalog_get_product, ask_user.
Hidden goal:
    ``{topic, rule_id, missed_rule, kind, unit, value, text, facts, needed, fact_values,
    conditions}``: ``value`` is ``engine.evaluate(topic, facts)`` (a draw where no rule
    applies is redrawn), ``rule_id`` the deciding rule, ``missed_rule`` the rule the question
    was drawn for when one of its clauses fails (else null), ``needed`` the customer facts
    (slot names) the deciding rule's clauses test (for a topic's default rule, every fact the
    topic's rules test), and the missed rule's, ``fact_values`` what the customer would say,
    by slot name, ``conditions`` the thresholds the topic's rules test in the answer's unit (an answer may cite them).
Reward and is_correct:
    ``verifiers.policy`` reads the final message: a number of the answer's unit (money in
    exact cents, else 1e-6 relative) or a yes/no, and nothing conflicting; the agent must have
    searched the policy and asked for every needed fact the first message left out.
    r_task = 1 when all three hold, 0 for a right answer without them, −1 for a wrong or
    conflicting answer or none; correct iff all three hold.
Difficulty axes used:
    B_branch (clauses of the deciding rule), p_missing (facts left out), p_noise, T_max,
    B_tool.
Episode end:
    the first assistant message without a tool call.
Version history:
    1.0 — first version.
    1.1 — honest answers as assistants write them are right (a false-negative pass; not
    comparable with 1.0): a zero said in words ("there's no restocking fee", "return shipping
    is free", "free on any order", "no bulk discount", "no store warranty") when no number
    of the unit is written — the default restocking fee and many return and shipping fees
    are 0, and every such answer was wrong; counts in words ("fifteen percent", "a one-year
    warranty", "forty-five days"), "N weeks" for calendar days, "USD 12.50"; a yes or no
    after an interjection ("Unfortunately, no", "Good news — yes", "I'm sorry, but no",
    "I'm afraid not", "Absolutely"); without one, what the customer can or cannot do ("you
    can't return it", "that isn't available") is the answer, and both is none. "No problem"
    no longer says no, and "yes, or no" is a hedge (it said yes). "A month" is still not 30
    days.
    1.2 — an answer may cite the thresholds the topic's rules test ("shipping is free because
    your order is over $35", "$5.99, since orders under $50 don't ship free"): they were read
    as a second, conflicting value and every such answer was wrong. The goal's
    ``conditions`` lists them; a threshold equal to some rule's answer is still graded.
    2.0 — yes/no answers are a fair coin in every topic (red-team audit; not comparable with
    1.2): questions were drawn by clause count, the store's exceptions (clauses) say no and
    its defaults (none) yes, so nine answers in ten were no and "search, ask for everything,
    say No" averaged reward +0.8 (93% correct). A yes of the topic's default needs every
    fact the topic's exceptions test (``needed``), and a wrong yes/no costs r_task −1 (a
    coin is right half the time), a wrong number still −0.5: the blind "No" now averages
    ≈ 0 and the blind "Yes" ≈ +0.1 (the efficiency term of the lucky half).
    2.1 — the return method (mail, drop-off point, pickup) is labelled and asked as one: the
    vocabulary called it the "refund method", so "How will you send the item back: by mail
    or at a drop-off point?" got "I'm not sure, it doesn't matter to me" in 13 of the 15 of
    100 tasks that need it (honest-agent audit). ``env.user`` now knows its paraphrases.
    The customer knows whether their item is a large one (fact ``large_item``, "item size":
    "a large item" / "not a large item", asked by "large", "bulky", "oversized", …): rules
    test the ``large_item`` tag, the documents name only "furniture and appliances" as
    examples, and "Is it a large item?" got "I don't know" while a television's or a gaming
    chair's answer hinged on it (5 / 10 / 7 of 40 tasks at d = 0 / 3 / 6 on 5k products).
    2.2 — the customer names their state when asked in the documents' words ("Are you
    sending it back from Alaska or Hawaii?", "Do you live in the contiguous US?") or for
    where they are ("What is your delivery address?", "Where are you located?"): only
    "state", "ship to" and "destination" were heard, and those questions got "I'm not sure,
    it doesn't matter to me" in all 16 of 60 tasks that need the state (honest-agent audit;
    a mail return from Alaska, $12.99, read as the usual $6.99). ``env.user`` knows the
    words; the tasks are unchanged. The customer also names their return method when asked
    in everyday words ("Would you like to mail it, drop it off, or have it picked up?", "How
    will you return it?"), as returns 2.6's does. A rule whose only test of the item is the
    ``large_item`` tag ("… on orders of $15.00 or more without large items") needs
    ``large_item``, not ``category``: "Is it a large item?", what the rule tests, left a
    right answer at r_task 0 in 11 of 104 tasks at d = 0–12 on 5k products (honest-agent
    audit). The verifier takes the product category asked (or said) for it too, so an agent
    asking for the category, as the prompt lists it, scores as before. The customer's state
    code reaches the agent as written: typos made "A." of CA and "sK" of AK in 11 of 57
    replies at d = 0–12 on 5k products, and one substitution makes AK "AL" (Alabama, on the
    other side of the rule); short capital codes are protected like numbers (``gen.slots``).
    A customer who does not know the answer no longer says it does not matter ("I'm not sure, it
    doesn't matter to me", "No idea. Doesn't matter."): said to any question the script does not
    answer, it told an agent asking which order or which format that any would do (13 of 90
    unanswerable questions in journey, cart and status tasks at d = 4/8/12 on 5k products). Replies
    only; tasks are drawn as before.
    Distributional shortcuts closed (audit; not comparable with the 2.2 tasks before it): a
    question was always answered by the value of the rule drawn for it, and every number
    that rule tests sat exactly on its threshold, so at high d, where few rules have
    B_branch clauses, the topic named gave the answer: the commonest answer of the topic at
    d was right in 146 of 200 tasks at d = 8 and 200 of 200 at d = 12 on 5k products, and
    "search, ask everything, say it" averaged reward +0.56 and +0.90 (the oracle's) without
    reading a rule. Topics are drawn uniformly (then a rule of the topic); a number's
    situation may miss its rule by one clause, another rule with no more clauses deciding
    (goal ``missed_rule``; ``needed`` adds the missed rule's facts), the answer uniform among
    those reachable; numbers sit on their threshold in half the draws where that side holds
    it, else a drawn distance off. The same blind guess now averages +0.22 / +0.14 / +0.08 /
    −0.01 at d = 0 / 4 / 8 / 12 (was +0.21 / +0.40 / +0.56 / +0.90); 44–48% of the numbers
    at d = 12 sit on their threshold (was 100%).
    2.3 — questions at high d draw from many rules (rule file 2; not comparable with 2.2): a
    question's rule has B_branch = 1 + d // 3 clauses, and rule file 1 had 9 / 3 / 2 rules in 4
    / 3 / 2 topics with 3 / 4 / 5 clauses, so d = 9–11 drew from 3 rules and d = 12 from 2
    (restocking fee, shipping cost): 30 tasks at d = 12 on 5k products held 10 distinct cases
    (rule drawn, rule deciding, answer), and a policy trained there memorises them. Rule file 2
    adds 35 rules as a store writes them (return windows for Premium members by kind, condition
    and price; warranties by kind, tier, price and region; bulk discounts by quantity, unit
    price, kind, tier and region; delivery days by method, state, tier and large items;
    price-adjustment windows by kind, tier, price, condition and quantity; restocking fees on
    opened jewelry and large items; remote large-item pickup and shipping): 20 / 16 / 10 rules
    in 8 / 8 / 8 topics at 3 / 4 / 5 clauses, none tied with an equally specific rule the text
    cannot order ("… large items other than electronics"). Cases among 30 tasks: 12 / 12 / 13 /
    10 → 27 / 20 / 26 / 23 at d = 9 / 10 / 11 / 12. The blind "search, ask everything, say the
    topic's commonest answer at d" averages (300 tasks per d, in-sample) +0.21 / +0.14 / +0.07
    / +0.01 at d = 0 / 4 / 8 / 12 (was +0.25 / +0.11 / +0.04 / −0.02); learned on half the
    tasks and scored on the other, +0.09 / −0.01 / −0.12 / −0.12 (was +0.09 / −0.02 / −0.03 /
    −0.06). No redraws at d = 12 (none before).
          Also, asked whether there is anything ("Is that all?", "Does the item need to be
          compatible with anything?"), a customer who has stated every fact in the question's scope
          says so (``env.user``: reply kinds ``all_said`` and ``nothing``), where they said "I'm not
          sure", and such a question no longer gets the request's own item for an answer. A policy
          customer's facts are not omitted yet unsaid until asked (the state, the reason), so
          "that's all" waits for them: at the first turn none of 39 tasks at d = 0–12 on 5k products
          says it. Replies only.
          Also, the policy documents say which of two rules applies where the engine's order,
          not the narrower rule, decides: of rule file 2's 20 pairs of equally specific rules that
          both hold for one situation, 13 decide an answer by a priority the text never showed
          (the others are tiers, an overlap a narrower rule always decides, or $0.00 either
          way): a television is electronics and a large item; "Premium members get 60 days to
          return most items" beside "Jewelry … 14 days"; large-item shipping beside free
          shipping over the threshold. The deciding rule's line now ends "This applies even when the item is a
          large item.", generated from the engine's order (``PolicyEngine.outranks``: 28 pairs in
          store 0, tied ones and rules with more clauses that are not the narrower, as "Standard
          shipping on orders of $49.00 or more costs $0.00. This applies even when the address
          is in Alaska or Hawaii."), so text and engine cannot disagree. 5 of 260 tasks at
          d = 0–12 on 5k products hinged on such a tie (9 on any unstated order); now none.
          Tasks and grading unchanged; policy_search's passages of those topics read longer
          (each topic's own section ranks first as before for its phrases and questions).
          Also, the customer knows whether their item is electronic (fact ``electronic``, "item
          type": "an electronic item" / "not an electronic item", asked by "electronic",
          "electrical", "plug in", …) where the question's topic has a rule testing the
          ``electronics`` tag: the item's name and department do not settle it (a TV mount is in
          the Electronics department without it; a stand mixer and an electric kettle carry it),
          and "Is it an electronic item?" got "I don't know" in 48 of 48 tasks at d = 3/6/9/12 on
          5k products (honest-agent audit; now answered in the 37 whose topic tests it). The
          answer flips with that tag in 86 of 260 tasks at d = 0–12, 8 of them on such a leaf
          (a Premium member's 50 TV mounts at $25: 25% as a non-electronic item, not the
          electronic 10%). The oracle's question names "item type" too; answers and grading
          unchanged.
          Also, a rule deciding with a broader clause on the other rule's fact says so:
          ``PolicyEngine.outranks`` took testing the same fact for implying its clause, so
          "Members buying 50 or more units of an electronic item get 10% off" (Basic or Premium)
          decided a Premium member's order over "Premium members buying 25 or more units … 15%",
          and "Deliveries to Alaska and Hawaii take up to 12 business days" (standard, expedited,
          two-day) over "Standard shipping arrives within 6", with no word in the documents. 3
          lines of store 0 gain their sentence ("This applies even when you are a Premium
          member."); 4 of 260 tasks at d = 0–12 on 5k products hinged on such an order (all the
          Alaska one; the bulk ones are rarer). Tasks and grading unchanged.
          Also, a quantity the customer has is a whole number of at least one: filled in around
          the rules' bounds in steps of −7.5 / +3.25 / +12 (floored at 0), it made the customer
          say "the quantity is 0" of a price adjustment in 9 of 54 tasks with a quantity at
          d = 0–12 on 5k products (honest-agent play), and 5.25 said as 5 in 13 (the engine read
          5.25); now −8 / +3 / +12, at least 1, and a drawn distance off a bound stays at least
          1 (54 of 54 whole and at least 1). Every candidate kept sits on the same side of
          every bound as the one it replaces; the draws (situations, some answers) change.
    2.4 — a non-native customer's answer opens "Sorry," where it opened "Yes,": answers also
          reply to yes-or-no questions, and "Is your budget $20?" got "Yes, the budget is $25"
          (``templates/user/answer.j2``; the same reply in every environment). Replies only.
          Also, the restocking fee at d = 0–2 depends on the item (rule file 3 adds a fee on
          opened items): its one-clause rule (faulty items, 0%) fell back on the 0% default when
          missed, so 134 of 134 such tasks (600 per d on 5k products) said 0%; now 67 say 0%, 67
          the opened fee, the commonest answer 53 / 59 / 53% at d = 0 / 1 / 2. "Personalised or
          custom-made items cannot be returned" decides for personalised items (it came after
          final sale, which the one personalised leaf also carries, and decided none of 7,800
          tasks at d = 0–12; now 21). Other topics' answers are drawn as before.
          Also, a yes is drawn among the rules with the most clauses up to B_branch and the
          topic's default: "Items that arrive defective … can always be returned" (one clause)
          beat "Most items can be returned" (none) every time, so every returnable yes at d = 0–5
          was a faulty item, every no a change of mind, and the reason alone told the answer
          (150 / 137 of 287 such tasks, 600 per d on 5k products); now 64 changes of mind are a
          yes and 137 a no, by the item. Likewise a return method at d = 3–5 was yes exactly when
          it was pickup (89 of 89 yes; mail always no); now mail or drop-off is a yes in 52 of
          89. The coin is unchanged, and so is every other topic.
    2.5 — a restocking fee said with the share paid back ("a 10% fee, so you get 90% back",
          "you'll be refunded 85%") states the fee: such an honest answer was wrong on 55 of
          55 fee tasks (d = 0–12, 5k products), now right; "10% back" on a discount is still
          the discount. A yes or no after a list marker ("3) Yes.", "(2) No.", "b) No") is an
          answer. Every task id changes with the version.
          Also, "15-percent", "15 pct" and "15％" are percentages, "you'd receive 85% of the
          price" a share paid back (each was wrong on 12 of 12 fee tasks), and a sentence
          opening "No <noun>" ("No receipt is needed") is no second answer (6 of 6 wrong);
          "Nope" is a no.
    2.6 — the customer answers facts asked in everyday words, as discovery 1.10 tells:
          "Do you have a paid plan?", "Which plan are you on?" (the tier: 75 of 75 asks got
          "No idea"), "What's the item?", "What did you buy?" (the category: 576 asks), "Where
          should it be shipped?", "What's your zip code?" (the state), "Is it still sealed?",
          "What state is the item in?" (the condition), "What did you pay for it?", "What's the
          subtotal?", "How do you want it shipped?", "How big is the item?". An open question
          still gets none of them: a policy's facts are asked for by name. Drawn as before;
          every task id changes with the version.
          Also, the final answer is read as an assistant writes it (``verifiers.text``): a
          range or alternative of numbers states each ("6-12 months", "5–7 business days",
          "$49.00–54.00", "between 34.99 and 39.99 dollars", "10 or 15 percent": the unit
          written once applies to all), so a hedge over values holds a wrong one (32 of 32
          such hedges on the true value passed, money ones 22 of 22); "Yes in most cases. No
          if the item was used." answers both. Honest answers now count: a zero in words
          ("There's no return shipping fee", "won't cost you anything", "complimentary", "it
          doesn't come with a warranty", "free no matter how much you spend"), a 0% fee as "a
          full refund (100% of the price)", a no as a passive or an option ("it can't be
          returned", "non-returnable", "that isn't an option", "we can't price-match it") and
          a yes as "Sure" or "your order qualifies".
          Also, the system prompt says what the grading already did: the answer gives the
          value for the customer's case alone, and any other amount or number of days in it,
          even to explain the rule ("the standard is 30 days, but as a Premium member you get
          45"), reads as a second answer. An honest agent could not know that before.
          Also, asked openly for more with facts left unsaid, the customer asks what the agent
          wants to know (discovery 1.10), where they said "I don't know".
          Also, an affirming opener beside a stated answer is courtesy: "Sure! Unfortunately,
          no, …" and "Of course! No, …" read as yes and no.
          Also, typo noise keeps numbers as written (discovery 1.10): every noisy first
          message changes.
    2.7 — the system prompt states the turn and call budget, as discovery 1.11's does.
          Every task id changes with the version.
    2.8 — a wrong number costs r_task −1, as a wrong yes/no does (cheat audit; not
          comparable with 2.7). At −0.5 a guess paid whenever it was right more than a
          third of the time, and a topic's commonest answer often is (restocking fees 45%,
          price-match windows 44%, 5k products, d = 0–12): "search, ask everything, say the
          topic's commonest number" averaged reward −0.12 over 918 tasks but above 0 on four
          topics (free shipping thresholds +0.26, restocking fees +0.02); now −0.38, and a
          topic's guess pays only where its commonest answer is right in more than ~46% of
          tasks (none in the long run: the commonest share seen on 24+ tasks is a 50% sample
          of three tier-decided values).
    2.9 — the answer is read in more honest wordings (an honest-agent audit):
          "Sorry, but that's not something we can offer" was read as a yes (its "we can
          offer"; 25 of 25 such no-answers failed), "It can be returned" and "the price can
          be adjusted" as nothing (23 of 23 yes-answers failed), "Yep"/"Yeah" as nothing; a
          zero said as "isn't eligible for a bulk discount", "the discount doesn't apply" or
          "the warranty doesn't apply" was not read. Every task id changes with the version.
          Also, "Which state is it shipping to?" asks the delivery state alone: a customer
          holding an item's condition answered it with that (48 of 48 such tasks, 5k).
          Also (a second audit: 6,348 honest answers, 200 templates, on 520 tasks at d =
          0–12), read now where 574 failed and 8 still do: "12 mo." and "2 yrs", "half a
          year", "the next business day", "Two-day shipping arrives within 3 business days"
          (the method's "two-day" is no answer), ", and yes", "That's a no", "Pickup isn't
          offered, but you can return it by mail" (a no), "you can send it back", "We'll
          refund", "You sure can!", a zero said as "costs you nothing", "fee: none", "a full
          refund" (restocking), "only the manufacturer's warranty", "always get free
          shipping", a fee beside the share refunded ("90% of what you paid", a "Refund:"
          line under a "Restocking fee:" line), a discount as the share paid ("you pay
          95%"). "Yes and no" and "No and yes" are no answer (each read as its first word),
          and a restated fact is skipped only in its own unit: the item's $10 price hid a
          "10%" beside a true 15%.
          Also (a customer audit, 156 tasks): "What kind of account do you have?" gets the
          tier, not the product category (139); "Where is the order being delivered?" the
          state (81 got "I'm not sure"); "How many did you buy?", with no quantity held,
          "I don't know", not the category (123).
    2.10 — as discovery 1.13: "How many days ago did it arrive?" got a quantity (33 of 156
          tasks, 5k, d = 0–12); "Which state is it being shipped to?" no longer adds the
          shipping method (33). Asks failing in a customer audit's bank: 83 of 4,992 before,
          17 now. Replies only; every task id changes with the version.
    2.11 — the final answer is read in the wordings of a paraphrase bank written apart from
          the readers (400 answers to 20 questions): honest answers read wrong fell from 31
          of 280 to 4, hedges and wrong answers read right from 10 of 120 to 3 (none a hedge
          over two answers). Arithmetic on the answer beside it is skipped ("$35.51 back",
          "bringing your total to $27.99", "$29.00 over the minimum", "35 days left",
          "Remaining: 27 days"), and is the answer only when nothing else is said; a yearly
          fee's monthly share is no yearly fee ("$99 per month" is wrong). Numbers in words
          with their digits ("forty-five (45) days"), money in words ("ninety-nine dollars",
          "five dollars and ninety-nine cents"), "two full years", zero said as "we don't
          provide our own warranty", "there isn't a bulk discount", "Discount: none", "100%
          of your $120.00 comes back to you", and "**Returnable:** No" are read. "Whether
          shipping is free depends …", "I can't say whether we'll match it" and "you may or
          may not be able to" answer nothing; "1- or 2-year" is a hedge. A policy audit's
          5,658 cheats: 140 fewer pass ("about nine dollars ($10.99)"). Every task id
          changes with the version.
    2.12 — as discovery 1.14: "What would you like to ask?" gets the question (257 of 257 got
          "I'm not sure"), "What sort of membership or account do you have?" the tier alone
          (the category too), "What kind of shipping did you go with?" the shipping method
          (the category), "How many did you purchase?" the quantity or nothing (the category),
          "Where are we shipping this order to?" the state (the shipping method). Replies
          only; every task id changes with the version.
    2.13 — "What state is it shipping to?" and "Where are you shipping it?" get the state
          alone (11 of 40 tasks, 5k, d = 0–12, got the shipping method too, by "shipping"),
          and "How is it being shipped?" the shipping method (it got the state, by "being
          shipped": 18 of 40; a customer holding no method now says "I don't know"), and
          "What state is the item in?" (its condition) no longer the state (11 of 40). Zero said
          of the thing asked about is read: "you won't get one", "there isn't one", "you don't
          qualify for it", "that isn't possible" (a discount), "it doesn't come with one" (a
          warranty), "you won't pay for return shipping", "on the house" (a fee): of the
          answer bank's 280 honest answers 4 read wrong, 2 now. As discovery 1.15, the second
          bank's "Which policy would you like to know about?", "What can I clarify regarding
          our policies?" and "… how the store handles things?" get the question, "Which
          department would this item fall under?" the category, "What does that item sell
          for?" the price and "the current state of the product" the condition (each "I
          don't know" on every task holding the fact). A second answer bank written apart
          from the readers (300 answers to ten questions): honest ones read wrong 8 of 200 →
          0 ("18 days, to be exact" after "time left —", "18 days remain", "you'd net
          $37.51", "order + shipping = $33.99", a table's "Yes", "final sale means no
          returns", "can't be sent back"), wrong ones read right 25 of 100 → 23 ("either
          $5.99 or free" is a hedge; made-up conditions and a value then its contrary still
          pass). Every task id changes with the version.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

import numpy as np

from shopgen.gen.difficulty import Theta
from shopgen.gen.policy import Decision, PolicyEngine, format_value
from shopgen.gen.slots import Slot, make_slot
from shopgen.gen.tasks.base import (
    Draft,
    GenContext,
    Oracle,
    Redraw,
    call,
    chunked,
    pick,
    spoken_list,
)
from shopgen.schemas.policy import FACT_VALUES
from shopgen.schemas.task import TaskRow

#: How a customer names each topic (the ``topic`` slot).
TOPIC_PHRASES: dict[str, str] = {
    "returnable": "whether I can return an item",
    "return_window": "how long I have to return an item",
    "restocking_fee": "the restocking fee on a return",
    "return_method_available": "whether I can use a particular return method",
    "return_shipping_fee": "what sending a return back costs",
    "free_return_threshold": "the order amount for free returns",
    "free_shipping_threshold": "the order amount for free shipping",
    "shipping_cost": "how much shipping costs",
    "shipping_days": "how many business days delivery takes",
    "ship_method_available": "whether a shipping method is available",
    "price_match": "whether you adjust the price if it drops",
    "price_match_window": "how long after buying I can ask for a price adjustment",
    "warranty": "how long the store warranty is",
    "bulk_discount": "the discount for buying in bulk",
    "membership_fee": "what the membership costs",
}

#: Engine fact → (slot or fact name, kind, label, extra keywords). Slots of the policy
#: vocabulary may appear in the first message; the rest are facts told only when asked.
FACT_SLOTS: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "tier": ("tier", "choice", "membership tier", ()),
    "category": ("category", "text", "product category", ("product", "what kind")),
    "days_since_delivery": ("days", "days", "days since delivery", ()),
    "return_method": ("method", "choice", "return method", ("return method",)),
    "ship_method": ("ship_method", "choice", "shipping method", ("shipping", "delivery speed")),
    "order_total": ("order_total", "money", "order total", ()),
    "item_condition": ("condition", "choice", "item condition", ("condition",)),
    "reason": ("reason", "text", "reason for the return", ("reason", "why")),
    "price": ("price", "money", "item price", ("item price", "unit price")),
    "quantity": ("quantity", "quantity", "quantity", ("how many", "units")),
    "state": ("state", "choice", "delivery state", ("state", "ship to", "destination")),
}
_IN_VOCAB = frozenset({"tier", "category", "days", "method", "order_total"})
#: Words that ask whether the customer's item is a large one (the ``large_item`` tag many
#: rules test): the customer knows it of their own item, and the documents name only
#: "furniture and appliances" as examples, so a television or a gaming chair is not
#: decidable from its category's name.
LARGE_WORDS = ("large", "bulky", "oversized", "big item", "heavy", "furniture", "appliance")
#: Words that ask whether the customer's item is electronic (the ``electronics`` tag): the
#: item's name and department do not settle it (a TV mount is in the Electronics department
#: without it, a stand mixer carries it), and the customer knows it of their own item.
ELECTRONIC_WORDS = ("electronic", "electronics", "electrical", "plug in", "plugs in")

#: How the customer says a fact's value.
SAY: dict[str, dict[str, str]] = {
    "tier": {"none": "regular (no paid plan)", "basic": "basic", "premium": "premium"},
    "return_method": {"mail": "mail", "drop_off": "drop-off point", "pickup": "scheduled pickup"},
    "ship_method": {
        "standard": "standard shipping",
        "expedited": "expedited shipping",
        "two_day": "two-day shipping",
        "next_day": "next-day shipping",
    },
    "reason": {
        "changed_mind": "I changed my mind",
        "defective": "it is defective",
        "wrong_item": "they sent the wrong item",
        "damaged_in_transit": "it arrived damaged",
    },
}
_STATES = ("CA", "NY", "TX", "WA", "AK", "HI")
_LEAF_FACTS = frozenset({"category", "department", "tags"})


def generate(ctx: GenContext, d: int, axes: Theta, rng: np.random.Generator) -> Draft:
    """Draw a rule with B_branch clauses, a situation where it decides, and the question."""
    engine = ctx.engine
    branch = int(axes.B_branch)
    usable = _rules(engine, branch)
    topic = pick(rng, sorted({engine.rules[r].topic for r in usable}))
    in_topic = [r for r in usable if engine.rules[r].topic == topic]
    if engine.rules[in_topic[0]].answer.kind == "boolean":
        rule_id = _yes_or_no(engine, pick(rng, in_topic), branch, rng)
        facts = _place_numbers(engine, rule_id, _situation(engine, rule_id, rng), rng)
    else:
        rule_id, facts = _any_answer(engine, in_topic, rng)
    decision = engine.evaluate(topic, facts)
    if not isinstance(decision, Decision) or (
        decision.rule_ids[0] != rule_id and decision.value == engine.value(rule_id)
    ):
        raise Redraw(f"{rule_id} does not decide its witness")
    asked = engine.rules[rule_id]
    rule = engine.rules[decision.rule_ids[0]]
    missed = None if rule.id == rule_id else rule_id
    said = _said_values(engine, facts)
    needed = _needed(engine, rule) | (_needed(engine, asked) if missed else set())
    if "category" in needed:  # the category tells whether the item is large
        needed.discard("large_item")
    needed = sorted(needed)
    slots: list[Slot] = [make_slot("policy", "topic", TOPIC_PHRASES[rule.topic], required=True)]
    extra: dict[str, Any] = {}
    for name in sorted(said):
        fact, value = said[name]
        _, kind, label, keywords = FACT_SLOTS[fact]
        if name in _IN_VOCAB:
            slots.append(make_slot("policy", name, value))
        else:
            extra[name] = {"value": value, "kind": kind, "label": label, "keywords": list(keywords)}
    if "tags" in facts:
        tags = facts["tags"]
        extra["large_item"] = _tag_fact(
            "large_item" in tags, "a large item", "item size", LARGE_WORDS
        )
        if _tests_tag(engine, rule.topic, "electronics"):
            extra["electronic"] = _tag_fact(
                "electronics" in tags, "an electronic item", "item type", ELECTRONIC_WORDS
            )
    goal = {
        "topic": rule.topic,
        "rule_id": rule.id,
        "missed_rule": missed,
        "kind": decision.kind,
        "unit": decision.unit,
        "value": decision.value,
        "text": format_value(decision.value, decision.unit, decision.kind),
        "facts": facts,
        "needed": needed,
        "fact_values": {name: value for name, (_, value) in said.items()},
        "conditions": list(_conditions(engine, rule.topic, decision.unit)),
    }
    episode = {"today": ctx.today.isoformat()}
    return Draft(slots=tuple(slots), goal=goal, episode=episode, facts=extra)


#: Chance that a yes/no question's answer is yes.
P_YES = 0.5


def _yes_or_no(engine: PolicyEngine, rule_id: str, branch: int, rng: np.random.Generator) -> str:
    """``rule_id``, or for a yes/no topic a rule of the same topic giving a fair coin's answer.

    The store's exceptions say no and its defaults (rules without clauses) yes, so rules drawn
    by clause count answered no nine times in ten, and a blind "No" after any search was
    right as often. The coin picks the answer; a rule of the topic that gives it is drawn
    among those with the most clauses up to ``branch``, and the topic's default when it gives
    the answer too: a yes of "items with a fault can always be returned" (one clause) beat
    "most items can be returned" (none) every time, so every returnable yes was a faulty item
    and the reason alone told the answer (150 of 150 at d = 0–5 on 5k products). Topics whose
    default is their only such rule, or says no, draw as before.
    """
    if engine.rules[rule_id].answer.kind != "boolean":
        return rule_id
    want = bool(rng.random() < P_YES)
    same = [
        r.id
        for r in engine.rules_of(engine.rules[rule_id].topic)
        if r.answer.kind == "boolean"
        and bool(engine.value(r.id)) == want
        and len(r.when) <= branch
        and _witness(engine, r.id)
    ]
    default = [r for r in same if not engine.rules[r].when]
    if bool(engine.value(rule_id)) == want:
        return pick(rng, [rule_id, *default]) if default else rule_id
    if not same:
        return rule_id
    most = max(len(engine.rules[r].when) for r in same)
    return pick(rng, [r for r in same if len(engine.rules[r].when) == most or r in default])


#: Chance that a numeric fact a clause lets equal its threshold sits exactly on it.
P_AT = 0.5
#: Numeric facts counted in whole units (days, items); the rest are money, in cents.
_WHOLE = frozenset({"days_since_delivery", "quantity"})
#: Comparisons that hold at their threshold, by the side beyond it where they hold (+1 above).
_INCLUSIVE = {"ge": 1, "le": -1}
_STRICT = {"gt": 1, "lt": -1}


def _offset(fact: str, bound: float, rng: np.random.Generator) -> float:
    """A distance from ``bound`` a customer's number may sit at: small to about half of it.

    The witness put every number the rule tests exactly on its threshold ("$15.00 on orders of
    $15 or more"), so "the fact sits on the edge" answered without asking what it was.
    """
    if fact in _WHOLE:
        return float(rng.integers(1, max(2, int(bound) // 2) + 1))
    return max(0.01, round(float(bound) * float(rng.uniform(0.02, 0.5)), 2))


def _beside(fact: str, op: str, bound: float, holds: bool, rng: np.random.Generator) -> float:
    """A value of ``fact`` on the side of ``bound`` where ``op`` holds (or fails): on it or off it.

    On the threshold in a fixed share (``P_AT``) of the cases where that side includes it, else
    a drawn distance away, never below zero (whole units: never below one).
    """
    inclusive = op in _INCLUSIVE
    side = _INCLUSIVE.get(op) or _STRICT[op]
    if not holds:
        side, inclusive = -side, not inclusive
    if inclusive and rng.random() < P_AT:
        return float(bound)
    value = bound + side * _offset(fact, bound, rng)
    if fact in _WHOLE:  # whole units, at least one ("up to 2 laptops" is not met by none)
        return max(1.0, round(value))
    return max(0.0, round(value, 2))


def _numeric_clauses(engine: PolicyEngine, rule_id: str) -> list[Any]:
    return [
        c
        for c in engine.rules[rule_id].when
        if (c.op in _INCLUSIVE or c.op in _STRICT) and c.fact in FACT_SLOTS
    ]


def _place_numbers(
    engine: PolicyEngine, rule_id: str, facts: dict[str, Any], rng: np.random.Generator
) -> dict[str, Any]:
    """Move each number ``rule_id`` tests off its witness's threshold in a fixed share of draws.

    A placement that would stop the rule deciding (another clause on the same fact, a rule
    before it) is not taken: the witness's value stays.
    """
    topic = engine.rules[rule_id].topic
    for c in _numeric_clauses(engine, rule_id):
        bound = float(engine.literal(c.value))
        trial = {**facts, c.fact: _beside(c.fact, c.op, bound, True, rng)}
        if engine.matching(topic, trial)[:1] == [rule_id]:
            facts = trial
    return facts


def _situation(engine: PolicyEngine, rule_id: str, rng: np.random.Generator) -> dict[str, Any]:
    """The rule's witness with every other fact of its topic given a value that keeps it deciding."""
    return _complete(engine, rule_id, dict(_witness(engine, rule_id)), rng)


def _any_answer(
    engine: PolicyEngine, rule_ids: list[str], rng: np.random.Generator
) -> tuple[str, dict[str, Any]]:
    """A rule of one number topic and a situation: each answer the draw can reach equally likely.

    A question drawn for a rule was always answered by that rule's value, so where few rules
    have B_branch clauses the topic named in the first message gave the answer (200 of 200
    tasks at d = 12 on 5k products, 146 of 200 at d = 8). Each rule's situation is kept, or
    one of its clauses broken so that another rule, with another answer, decides
    (:func:`_misses`); the answer is drawn uniformly among all these reach, then a situation
    giving it, as yes/no answers are a fair coin. A missed rule still has B_branch clauses to
    test: the agent must see which one fails.
    """
    by_value = _reachable(engine, rule_ids, rng)
    return pick(rng, by_value[pick(rng, sorted(by_value))])


def _reachable(
    engine: PolicyEngine, rule_ids: list[str], rng: np.random.Generator
) -> dict[Any, list[tuple[str, dict[str, Any]]]]:
    """Answer → (rule drawn, situation) for each rule's situation and its one-clause misses.

    One key is one answer for the whole (topic, B_branch): the restocking fee at B_branch 1
    had only "0%" (its one rule, faulty items, and the default it falls back on both say 0%).
    """
    by_value: dict[Any, list[tuple[str, dict[str, Any]]]] = {}
    for rule_id in rule_ids:
        facts = _place_numbers(engine, rule_id, _situation(engine, rule_id, rng), rng)
        by_value.setdefault(engine.value(rule_id), []).append((rule_id, facts))
        for value, trial in _misses(engine, rule_id, facts, rng):
            by_value.setdefault(value, []).append((rule_id, trial))
    return by_value


#: Other items tried per clause on the item itself (category, department, tags) when missing it.
_LEAF_TRIES = 4


def _misses(
    engine: PolicyEngine, rule_id: str, facts: dict[str, Any], rng: np.random.Generator
) -> list[tuple[Any, dict[str, Any]]]:
    """(answer, situation) for situations breaking one of ``rule_id``'s clauses, answer changed.

    The rule deciding instead has no more clauses than ``rule_id``: at most B_branch to test.

    A number is moved just to the clause's failing side (``_beside``); a word fact takes each
    value that fails the clause; the item becomes another real leaf that fails it (a few drawn).
    """
    rule = engine.rules[rule_id]
    own = engine.value(rule_id)
    out: list[tuple[Any, dict[str, Any]]] = []
    for i, c in enumerate(rule.when):
        if c.fact in _LEAF_FACTS:
            leaves = _failing_leaves(engine, rule_id, i)
            picks = rng.permutation(len(leaves))[:_LEAF_TRIES] if leaves else []
            options = [
                dict(zip(("category", "department", "tags"), leaves[j], strict=True)) for j in picks
            ]
        elif c.fact not in FACT_SLOTS:
            continue
        elif c.op in _INCLUSIVE or c.op in _STRICT:
            bound = float(engine.literal(c.value))
            options = [{c.fact: _beside(c.fact, c.op, bound, False, rng)}]
        else:
            options = [
                {c.fact: v}
                for v in _candidates(engine, rule.topic, c.fact)
                if not engine.holds(c, {c.fact: v})
            ]
        for change in options:
            trial = {**facts, **change}
            decision = engine.evaluate(rule.topic, trial)
            if (
                isinstance(decision, Decision)
                and decision.value != own
                and len(engine.rules[decision.rule_ids[0]].when) <= len(rule.when)
            ):
                out.append((decision.value, trial))
    return out


@cache
def _failing_leaves(
    engine: PolicyEngine, rule_id: str, index: int
) -> tuple[tuple[str, str, list[str]], ...]:
    """Leaves (category, department, sorted tags) failing clause ``index`` of ``rule_id``."""
    clause = engine.rules[rule_id].when[index]
    out = []
    for cat, dept, tags in engine.leaves:
        leaf = {"category": cat, "department": dept, "tags": sorted(tags)}
        if not engine.holds(clause, leaf):
            out.append((cat, dept, sorted(tags)))
    return tuple(out)


def _needed(engine: PolicyEngine, rule: Any) -> set[str]:
    """The slots an agent must know to be sure ``rule`` decides: its clauses' facts.

    A default (no clause) decides only when none of the topic's exceptions holds, so every
    fact they test is needed to rule them out.
    """
    facts = {c.fact for c in rule.when} if rule.when else topic_facts(engine, rule.topic)
    leaf = {"category"} if facts & _LEAF_FACTS else set()
    clauses = rule.when or [c for r in engine.rules_of(rule.topic) for c in r.when]
    if leaf and all(
        c.fact == "tags" and c.value == "large_item" for c in clauses if c.fact in _LEAF_FACTS
    ):
        # Only whether the item is large matters: "Is it a large item?" asks exactly that
        # (the verifier takes the product category for it too, as the prompt names it).
        leaf = {"large_item"}
    return {FACT_SLOTS[f][0] for f in facts if f in FACT_SLOTS} | leaf


#: Answer unit → the numeric facts whose thresholds the policy documents write in that unit.
_THRESHOLD_FACTS: dict[str | None, frozenset[str]] = {
    "USD": frozenset({"order_total", "price"}),
    "days": frozenset({"days_since_delivery"}),
}


@cache
def _conditions(engine: PolicyEngine, topic: str, unit: str | None) -> tuple[float, ...]:
    """Thresholds of ``topic``'s rules in the answer's unit that are no rule's answer.

    An honest answer cites them ("shipping is free because your order is over $35"); the
    verifier skips them like the customer's own facts. A number that is also some rule's
    answer on the topic is left out, so it stays graded: skipping it would let a hedge
    between two answers pass.
    """
    answers = {
        float(engine.value(r.id))
        for r in engine.rules_of(topic)
        if isinstance(engine.value(r.id), int | float) and not isinstance(engine.value(r.id), bool)
    }
    bounds = engine.thresholds(topic, _THRESHOLD_FACTS.get(unit, frozenset()))
    return tuple(b for b in bounds if b not in answers)


@cache
def _rules_cached(engine: PolicyEngine, n: int) -> tuple[str, ...]:
    usable = []
    for rule in engine.rules_with_clauses(n):
        if rule.answer.kind not in ("number", "boolean") or rule.topic not in TOPIC_PHRASES:
            continue
        if engine.witness(rule.id) is not None:
            usable.append(rule.id)
    return tuple(usable)


def _rules(engine: PolicyEngine, branch: int) -> tuple[str, ...]:
    """Rules with ``branch`` clauses that have a witness; fewer clauses past the file's maximum."""
    for n in range(branch, -1, -1):
        found = _rules_cached(engine, n)
        if found:
            return found
    raise Redraw("no policy rule has a witness")


@cache
def _witness(engine: PolicyEngine, rule_id: str) -> dict[str, Any]:
    return engine.witness(rule_id) or {}


def _tag_fact(held: bool, phrase: str, label: str, keywords: Iterable[str]) -> dict[str, Any]:
    """A fact the customer knows of their item's tag: ``phrase`` or "not <phrase>".

    The category alone does not tell an agent whether the store counts the item as a large or
    an electronic one (a TV mount sits in Electronics without the tag), so the customer says.
    """
    return {
        "value": phrase if held else f"not {phrase}",
        "kind": "choice",
        "label": label,
        "keywords": list(keywords),
    }


@cache
def _tests_tag(engine: PolicyEngine, topic: str, tag: str) -> bool:
    """Whether some rule of ``topic`` tests the item's ``tag``."""
    return any(c.fact == "tags" and c.value == tag for r in engine.rules_of(topic) for c in r.when)


def topic_facts(engine: PolicyEngine, topic: str) -> set[str]:
    """Every fact some rule of ``topic`` tests: what an exact answer may depend on."""
    return {c.fact for r in engine.rules_of(topic) for c in r.when}


def _complete(
    engine: PolicyEngine, rule_id: str, facts: dict[str, Any], rng: np.random.Generator
) -> dict[str, Any]:
    """Give the customer a value for every other fact of the topic that keeps the rule deciding.

    A real customer has a membership tier and ships somewhere; leaving such facts unknown
    would let an agent's question about them go unanswered. A fact for which no value keeps
    the rule deciding stays unknown.
    """
    topic = engine.rules[rule_id].topic
    for fact in _fillable(engine, topic):
        if fact in facts:
            continue
        options = list(_candidates(engine, topic, fact))
        rng.shuffle(options)
        for value in options:
            trial = {**facts, fact: value}
            if engine.matching(topic, trial)[:1] == [rule_id]:
                facts = trial
                break
    return facts


@cache
def _fillable(engine: PolicyEngine, topic: str) -> tuple[str, ...]:
    """The topic's facts a customer can be given a value for, sorted (the order drawn in)."""
    return tuple(sorted(f for f in topic_facts(engine, topic) - _LEAF_FACTS if f in FACT_SLOTS))


@cache
def _candidates(engine: PolicyEngine, topic: str, fact: str) -> tuple[Any, ...]:
    if fact in FACT_VALUES:
        return tuple(FACT_VALUES[fact])
    if fact == "state":
        return _STATES
    bounds = [
        float(engine.literal(c.value))
        for r in engine.rules_of(topic)
        for c in r.when
        if c.fact == fact
    ]
    if fact in _WHOLE:
        # Units are whole and at least one: "the quantity is 0" (or 5.25, said as 5) was drawn.
        return tuple(sorted({v for b in bounds for s in (-8, 3, 12) if (v := float(b + s)) >= 1}))
    return tuple(sorted({max(0.0, round(b + s, 2)) for b in bounds for s in (-7.5, 3.25, 12.0)}))


@cache
def _leaf_names(engine: PolicyEngine) -> dict[str, str]:
    """Leaf category id → how a customer names it (the first leaf with that id)."""
    names: dict[str, str] = {}
    for _, cat in engine.taxonomy.leaves():
        names.setdefault(cat.id, cat.name.lower())
    return names


def _said_values(engine: PolicyEngine, facts: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """Slot name → (engine fact, what the customer says) for the facts a customer knows."""
    out: dict[str, tuple[str, Any]] = {}
    for fact, value in facts.items():
        if fact == "category":
            out["category"] = ("category", _leaf_names(engine)[value])
        elif fact in FACT_SLOTS:
            name = FACT_SLOTS[fact][0]
            said = SAY.get(fact, {}).get(value, value) if isinstance(value, str) else value
            if FACT_SLOTS[fact][1] == "days" or fact == "quantity":
                said = int(said)
            out[name] = (fact, said)
    return out


def answer(goal: dict[str, Any]) -> str:
    """The final message a perfect agent writes: the one value, in the policy's own words."""
    if goal["kind"] == "boolean":
        return f"{'Yes' if goal['value'] else 'No'}. That is what our policy says for your case."
    return f"Our policy gives {goal['text']} in your case."


#: How the oracle asks for a fact the customer left out, in words the customer answers with
#: that fact alone ("how many you bought" also heard the category, "the state it ships
#: to" the shipping method; the rest by their label).
ASK_PHRASES = {
    "category": "the product category",
    "tier": "your membership tier",
    "order_total": "your order total",
    "ship_method": "the shipping method",
    "state": "your delivery state",
    "large_item": "whether it is a large item",
    "electronic": "whether it is electronics",
    "price": "the item's price",
    "quantity": "the quantity",
    "condition": "the condition it is in",
    "reason": "the reason for the return",
    "method": "how you would send it back",
}


def oracle(task: TaskRow) -> Oracle:
    """Search the policy and ask, in one question, for every topic fact the customer left out."""
    goal = task.decoded("goal")
    script = task.decoded("user_script")
    budget = task.axis("B_tool")
    calls = [call("policy_search", query=f"{goal['topic'].replace('_', ' ')} policy")]
    unsaid = [
        s
        for s in script["slots"]
        if s["name"] != "topic" and (s["omitted"] or s["name"] not in _IN_VOCAB)
    ]
    if unsaid:
        asks = [ASK_PHRASES.get(s["name"], f"your {s['label']}") for s in unsaid]
        calls.append(call("ask_user", question=f"Could you tell me {spoken_list(asks)}?"))
    for turn in chunked(calls, budget):
        _results = yield turn  # the oracle does not need what the tools say
    yield answer(goal)
