"""The simulated customer: answers ``ask_user`` from the task's hidden user script (issue #6 §4).

The customer knows the facts in :class:`~shopgen.schemas.task.UserScript` ``slots`` and nothing
else. A question is matched to slots by words: each slot is asked about by the synonyms of its
name's last segment (``color`` → colour, shade…), of its kind (``money`` → budget, price,
spend…), of its label, and by the script's own keywords. Matching works on word stems
(lower case, punctuation dropped, Snowball's English stems), phrase by phrase, so paraphrases
such as "What shade?", "which colours" or "how many do you need" all land. *Weak* words
("item", "order", "when") count only when no specific word matched, so "what size is the
item?" answers the size, not the item; the preference (kind ``preference``, asked by "how
much does price matter", "favourite brands", "how important"…) is no specific word, so
"anything else that matters?" also gets what an open question gets. With several cart
items, a question naming one item's words narrows the answer to that item.

Replies are rendered by :func:`shopgen.gen.render.render_user_reply` in the customer's style
with the script's noise, from ``stream(task.seed, "user", task.task_id, reply_index)``: the
same questions in the same order give byte-identical replies in any process.

The customer never says a product id (slots of kind ``id`` are unknown to them) nor any string
in ``never_say``; a scheduled switch is said once, at its turn (:meth:`SimulatedUser.reply` and
:meth:`SimulatedUser.at_turn_end`), after which answers give the new values. A switch that
changes one item of a list names the item (:func:`naming_the_item`). What a switch adds (an
item, a must-have) is known from then on, and not before, nor is the added item's quantity
(:attr:`CompiledScript.early`).

Asked whether there is anything ("Is that all?", "Any particular colour?"), a customer who has
said every fact in the question's scope says "Nothing else, that's all"; a substitution
customer asked about shared features the original has none of says "nothing in particular"
(:meth:`SimulatedUser._unanswered`). Such a question, and a yes-or-no one, never gets the
request's own item for an answer because it said "item" or "product" (:func:`_echo`).

A proposal the customer would otherwise not know about ("Is a $30 one OK?", "Is the black
one OK?") is confirmed or rejected where the script can check it — a price against a ceiling
held, a value of an axis against the one held, in the one item named — and says nothing
else (:meth:`SimulatedUser._proposal`); a rejection states the slot, as a correction. A price
weighed against the budget in other words ("Is $30 too much?") gets the budget stated, which
answers it whichever way the question leans. Asked whether to add something to the cart, a
customer with a list says what they want added, unless a variant proposed can be judged.

The package is four modules, each importing only those before it: :mod:`.words` (stems and
the vocabularies), :mod:`.matching` (a compiled script and which slots a question asks),
:mod:`.naming` (how a reply says whose each fact is) and :mod:`.customer` (the episode's
customer). Names with a leading underscore are shared inside the package only.
"""

from shopgen.env.user.customer import SimulatedUser
from shopgen.env.user.matching import compile_script, match_slots, named_items
from shopgen.env.user.naming import SEEN_LABEL, saying_when_seen
from shopgen.env.user.words import stems

__all__ = [
    "SEEN_LABEL",
    "SimulatedUser",
    "compile_script",
    "match_slots",
    "named_items",
    "saying_when_seen",
    "stems",
]
