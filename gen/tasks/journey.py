"""journey — several requests in one conversation, by one customer.

Customer wants:
    L(d) = ``journey_length(d)`` things done in one conversation, each drawn from another
    environment (``SUB_ENVS``: discovery, substitution, cart, returns, status, policy, bundle,
    each usable from the least d at which its oracle fits the turns next to others). Every
    step belongs to the journey's one customer (their preferences, visit history and orders).
First message (what a policy reads):
    one sentence listing the steps in step order, each rendered ``<verb> <goal>`` with
    ``under <budget>`` and ``(order <ref>)`` appended when said (``templates/journey``). The
    ``verb`` names the sub-environment (:data:`ACTIONS`): "find suggestions for"
    (discovery; goal = the kind of product), "find a replacement for" (substitution; goal = the
    product's title words, it is in the visit history and out of stock), "add to my cart"
    (cart; goal = the items by their description, "the <noun> I looked at <when>" for history
    items), "sort out a return for" (returns; goal = "the <item>", the order number when
    said), "check on" (status; goal = "my <item> order (<what they want>)" or "my order",
    the order number when said), "ask about" (policy; goal = the topic), "get everything for"
    (bundle; goal = the project, its budget when there is one). A discovery or substitution
    step may add its constraints and number of options (``from <brand> under <price> rated
    <r> or better delivered within <n days> <attr> <value> (<k> options)``), a status step
    ``placed on <day>``: each such detail (:data:`DETAILS`, journey slot
    ``steps.<i>.<name>``) is dropped with p_missing like in its own environment. Every other
    fact a step needs (dropped details, variants, quantities, reasons, the policy facts, the
    bundle's list) is known to the customer and given only when asked; a question about one
    step is best phrased with that step's goal words (the customer narrows to it).
Final answer layout:
    one paragraph per step, in step order, separated by a blank line, as the system prompt
    tells the agent (since 2.2); a step's text facts (status, dates, policy answer, a refused
    return's reason) are graded on its own paragraph when the message has exactly one
    paragraph per step (headings joined to what they head, courtesy lines around the answers
    set aside), else on the whole message.
Tools offered:
    the union of the sub-environments' tools (``ENV_TOOLS["journey"]``).
Hidden goal:
    ``{steps: [{env, goal, episode, user_script}]}``: each step holds the sub-environment's own
    hidden goal and the views of its episode and user script that its oracle and verifier read
    (slot names as the sub-environment knows them; a slot the journey message does not say is
    ``omitted``).
Composition rules (why every draw is sound):
    - one customer: drawn first (with at least H_orders(d) orders); customer-bound generators
      run on ``ctx.for_customer(user_id)`` (a :class:`~shopgen.gen.tasks.base.CustomerView`),
      so their own draw of a customer yields this one. A returns step is drawn first: it fixes
      the episode's day, and the other steps are drawn on that day.
    - at most one order step (status or returns): each fixes which orders the account shows.
    - product-bound steps (discovery, substitution, bundle, cart, returns) use disjoint leaf
      categories, and a draw where one step's out-of-stock marks fall in another step's
      categories is redrawn, so no step's marks touch another's products; each
      recommendation list names the step it answers.
    - one cart: at most one cart step (each environment appears at most once).
    - recommendation lists: the runtime records every ``recommend_products`` call
      (``state.extra["recommendation_lists"]``). A list belongs to the recommend-step
      (discovery, substitution, bundle) whose categories hold most of its products (ties to
      the earlier step; a list with none of them belongs to no step), and each step is graded
      on the last list that belongs to it.
    - one change of mind at most: with p_switch a keyed draw picks one step whose environment
      can switch (:data:`SWITCH_ENVS`); that step is drawn with its own p_switch = 1 (the
      other steps with 0), so its environment's own switch (:mod:`shopgen.gen.switches`) is
      the journey's: a changed budget or another attribute value (discovery, substitution), a
      lowered budget or one more kind (bundle), another variant, item or one more item (cart),
      another exchange variant (returns). The step's hidden goal is its final intent (its
      generator applied the switch); the journey's script holds the switch under the
      journey's slot names (``steps.<i>.<name>``, a bundle budget as ``steps.<i>.price_max``)
      at the step's own turn, and the step's script holds it under its own names, so the
      step's oracle plays it as in its own environment. The customer says it once, at that
      turn, unprompted or in any reply, naming the step ("the budget for the desk lamps
      should be $150", "the Acme kettle in my cart should be …").
Reward and is_correct:
    ``verifiers.journey`` runs each sub-verifier's logic on the shared final state; r_task is
    the mean of the sub r_tasks; correct iff every step is.
Difficulty axes used:
    L(d) via journey_length, T_max(d) + L(d) − 1 turns (``journey_turns``), p_switch (one step's change of mind), p_missing (the
    steps' details dropped from the message), H_orders (orders on the account for
    status/returns steps), and through the steps m, k_rec, top_k, eps_rank, p_oos, B_branch,
    p_noise, T_max, B_tool.
Episode end:
    the first assistant message without a tool call.
Version history:
    1.0 — first version (status, policy, bundle).
    2.0 — all seven sub-environments, one customer per journey, per-step recommendation lists.
    2.1 — the change of mind comes from any step that can switch (its own environment's
          switch), not only a bundle budget.
    2.2 — status steps are graded by status 2.2's verifier (one date, one tracking number,
          hedged statuses contradict, the order must be looked up); policy steps by policy
          1.1's (zero in words, counts in words, yes/no after an interjection or as what
          the customer can do); returns steps by returns 2.1's (refusals as written). The
          system prompt states the final answer's layout the verifier grades by (one
          paragraph per request, in order): an agent could not know it before.
    2.3 — policy steps are graded by policy 1.2's verifier (a cited threshold of the topic's
          rules is no second answer); their goals hold its ``conditions``. A draw where one
          step's out-of-stock marks fall in another step's categories is redrawn: a bundle's
          marks among what its searches show (other categories' products too) could take a
          substitution step's feasible product out of stock, and the oracle failed its proof
          (d=8 on a 5k catalog stopped `shopgen tasks` at task 256).
    2.4 — the oracle packs the steps' calls into each turn call by call, longest way first
          (:func:`_pack`), splitting a step's turn over two when it does not fit, instead of
          whole turns first-fit in step order. More journeys fit T_max: at d = 5 on 100k
          products, rejected drives fell from 1.55 to 0.73 per accepted journey, and a cart
          step next to a bundle step (0 of 118 draws accepted before) now fits in 13 of 75.
          Bundle steps fit from d = 2 (``SUB_ENVS``; before, from d = 4).
          The paragraph layout survives an honest answer's wrapping: a heading-only paragraph
          joins the paragraph it heads, and courtesy lines ("Hi!", "Let me know if…") before
          the first answer or after the last are set aside (``verifiers.journey.texts``). A
          closing courtesy line alone failed 26% of oracle answers (a policy step read the
          other steps' prices as second answers).
          Discovery steps are drawn by discovery 1.3's generator (a shared leaf name is said
          with its department), bundle steps by bundle 1.1's with the list withheld (the
          journey message names only the project; before, a step drawn as listed could need
          every kind of it, and its kinds were drawn without the turn the question takes).
          Policy steps are drawn and graded by policy 2.0 (yes/no answers a fair coin, a
          default's yes needs every exception's facts, a wrong yes/no costs −1); returns
          steps by returns 2.4's verifier (four graded parts; "too late to return it" is a
          refusal; checks only of orders the customer can mean). No change of journey's own
          code for them.
          Discovery and substitution steps are drawn and graded by discovery 1.4's and
          substitution 1.3's code (stated utility anchors, gains above the goal's floor);
          the system prompt says how the customer's strength words weigh.
    2.5 — discovery, substitution, cart and returns steps are played by discovery 1.5's,
          substitution 1.4's, cart 1.1's and returns 2.5's oracles, which pass only ids and
          search words the customer or a tool gave them (no brand nobody showed, no hidden
          product title, no variant id orders_list does not show) and
          aim searches at the products they miss by brand and key attribute values. Rejected
          draws per journey on 100k products at d = 5 / 10 / 12: 1.05 / 1.15 / 3.6, against
          1.3 / 4.7 / 44 before, when 40 attempts gave up on 41% of journeys at d = 12.
          A cart step's change of mind names the item it is about, as cart 1.1's does, and an
          open question gets every constraint of its discovery and substitution steps.
          The script holds each cart item's description (``steps.<i>.items.<j>.desc``) and
          an answer stating several items' quantities or variants names the item of each:
          the customer answered a question about one item with every item's quantity,
          unnamed (9 / 18 / 23 of 30 journeys at d = 6 / 9 / 12 on 5k products held two
          cart items whose values differ). A generic noun ("item", "order") names no step: a
          step "how long I have to return an item" was taken as named by any question about
          items ("Which items do you need for back to school?" got its topic too).
          The system prompt says what a paragraph about a checked order states (its status
          and its delivery or expected delivery date, whatever the customer asked for: status
          steps are graded on both) and that a refused return says why: "check on my order
          (tracking number)" left 61 of 79 status steps in 150 journeys at d = 0–12 graded
          on a fact nobody asked for. A returns step's customer names the replacement when
          asked what they want instead (returns 2.5); a policy step's customer knows whether
          their item is a large one (policy 2.1); order ranks count days placed (status 2.3).
    2.6 — a cart step's customer answers a variant asked by the axis's noun ("Which
          format?") or by its options ("Gray, Olive or White?"), as cart 1.2's does; these
          got "it doesn't matter to me" (5 of 5 such slots in 40 journeys went unanswered).
          An attribute is asked for by its label's head word too. A discovery or
          substitution step's customer states their preference however they are asked how
          much a factor matters (discovery 1.6). A substitution step's customer names the
          features to match when asked what the substitute must "match" or have "in common"
          (substitution 1.5). An open question beside a specific one still gets every
          constraint of a discovery or substitution step (discovery 1.6).
          A policy step's customer names their state when asked about Alaska, Hawaii, the
          contiguous US or their address (policy 2.2). A status step's bare list of the
          order's dates does not state its date (status 2.4). A journey whose returns step
          moves its day past the catalog's lists no order still on its way (returns 2.6: 4
          of 40 journeys listed one "in_transit" with an expected date before the day).
          A middle rank among same-item orders says it counts those orders (status 2.4).
          A returns step's refusal is read as returns 2.6 reads it (the faulty-item rule's
          exceptions are context; more honest wordings of each reason). Returns and policy
          steps' customers name their return method asked in everyday words (returns 2.6).
          A returns step's item shows in every listed title that holds it (returns 2.6).
          A policy step whose rule tests only whether the item is large is asked by "Is it
          a large item?" as well as by its category (policy 2.2), and its customer's state
          code takes no typo (policy 2.2). A returns step's customer knows whether their
          hygiene item was opened (returns 2.6), and an order holds its item only when the
          line is that kind of item ("coffee" is not a coffee maker; returns 2.6).
          A policy topic's question words ("how much", "how long", "whether", "after") and
          the four ranking factors (price, rating, delivery, brand) no longer name its step:
          "How much do price, rating, delivery and brand matter to you?" was taken as naming
          a "how much shipping costs" step alone and answered with its order total only (13
          of 100 discovery/substitution steps at d = 5/8/11 on 5k products).
          A returns step's replacement value names its exchange ("Pink for the exchange of
          the gaming keyboard"): asked a question naming no step ("Which one would you like
          instead?"), the customer said "the color is Pink", which fitted the cart step's
          items as well (11 of 12 journeys with an exchange at d = 8-12 on 5k products).
          The system prompt says how suggestions are graded: one recommend_products call per
          request, with that request's products only (each request is graded on its own
          latest list; one call mixing two requests' products answers neither, though the
          tool says "a new call replaces the previous list"), a suggestion list as many
          in-stock products meeting every requirement as asked for, and a project's answer
          one in-stock product per kind needed within the budget. 44 of 60 journeys at
          d = 5/8/11/12 on 5k products have two or more such requests, 37 a project.
          It also says a request may come with requirements not said yet (price, rating,
          delivery time, brand or features), as discovery's prompt does: 21 omitted feature
          constraints in 90 journeys at d = 5/8/12 on 5k products were told only if asked.
          A change of mind's value names its request ("$43 for the bike commuting"; the
          label loses it): a reply stating values only said "actually make it $43", which
          fitted any request with a budget (1 of 24 journey switches at d = 4/8/12 on 5k
          products was said so; every mobile-style customer may).
          A question naming a step falls back to that step's weak words when its strong words
          matched only other steps' slots: "For the laptop bags: any features you need?"
          matched a project step's must-haves by "need", which the named step dropped, and
          got "I don't know" (11 of 21 omitted feature constraints in 90 journeys at
          d = 5/8/12 on 5k products; 0 of 21 now).
          A customer who does not know the answer no longer says it does not matter ("I'm not sure,
          it doesn't matter to me", "No idea. Doesn't matter."): said to any question the script
          does not answer, it told an agent asking which order or which format that any would do (13
          of 90 unanswerable questions in journey, cart and status tasks at d = 4/8/12 on 5k
          products). Replies only; tasks are drawn as before.
          An answer stating several steps' details names the step of each ("$23 for the
          stem toys"): "How much do price, rating, delivery and brand matter to you?" was
          answered with every step's budgets, ratings and rankings and no step named (21 of
          60 journeys at d = 8/11/12 on 5k products hold two rankings).
          A cart step's history item may share its kind with views at other times (cart 1.2,
          ``p_history_clash``): the journey's check no longer redraws every history holding
          two views of the noun, only one where another view of it (any step's) fits the time
          the customer says. 6 / 8 / 16 of 9 / 11 / 21 history items in 12 journeys at d =
          8/10/12 (5k products) now share their kind with other views. Rows change.
          Policy steps are drawn by policy 2.2's generator as it closes its distributional
          shortcuts (a number's situation may miss its rule by one clause, answers uniform
          among those reachable, numbers off their thresholds in half the draws): the
          topic of a step no longer gives its answer. Returns steps among same-item orders
          mean one of them drawn uniformly (returns 2.6), no longer the oldest in four of
          five. No change of journey's own code.
          The system prompt says an item to add to the cart may come without its colour,
          size or quantity, to be asked for, as cart's prompt does: "add the booties" meant
          four, and 57 of 98 cart quantities left out of 48 journeys at d = 4/8/10/12 on 5k
          products are not 1.
          It also says a project's products ("get everything for" it) are suggested with
          recommend_products, not put in the cart: "get everything" reads as buying, and a
          project put in the cart answered nothing and spoiled a cart step's exact cart (29 of
          48 journeys at d = 4/8/10/12 on 5k products hold a project, 17 with a cart step).
          A question naming one of a cart step's items asks about that item only, as in cart:
          the items shared their step's index, so "Which size for the tumbler?" narrowed to the
          step and got the bra's size, said as "the size is Size 34D" (31 of 60 journeys at
          d = 4/8/10/12 on 5k products hold an item whose "Which size/color for the …?" got
          only another item's value; 0 now). Replies only.
          A cart step's pack or tablet count is asked for by its pack or bottle ("Which pack
          size?", "Which bottle size?"), as in cart 1.2. An item swapped in or added by a
          change of mind is named by its own words, as in cart 1.2. One item's value names
          its item when the question named several items or none, and a finish or shade is
          asked for as a colour, and one-letter sizes listed as options ("S, M or L?") are
          answered, as in cart 1.2.
    2.7 — a substitution step's substitutes are of the original's kind and audience, and its
          customer says which when asked (substitution 1.6): a leaf holding leashes and
          collars, or boys' and girls' coats, ranked the other kind in the ideal list. The
          system prompt says a replacement is "the same kind of product for the same people".
          Also, discovery and substitution steps are drawn and graded by discovery 1.7's and
          substitution 1.6's code: at least 2·k_rec feasible products stay in stock, the
          stated preference's anchors are the feasible products' own price, rating and
          delivery range ("4.8 stars is ideal, 3.9 stars the worst"), and a list must reach
          nDCG ≥ 0.95, so a list ordered by one factor alone (cheapest, best-rated or fastest
          first) no longer passes on most tasks (58–88% of discovery and substitution tasks
          before, 22–30% now, 5k products). The system prompt no longer says a rating scores
          from 1 to 5 stars: it scores between the ratings the customer names.
          Also, policy and returns steps follow policy 2.3 and returns 2.7 (rule file 2: questions at
          high d draw from many rules; a few return windows change): 143 of 260 journeys at
          d = 0–12 on 5k products change.
          Also, a cart or returns step's customer answers "What size …?" of a capacity, length, storage,
          weight or pack count as cart 1.3's and returns 2.7's do (5 of 78 journeys at d = 0–12 on
          5k products held such an axis unanswered; now none). Replies only.
          An item or must-have a change of mind adds is in a cart or bundle step's list once said,
          and an added item's quantity is said only after the item, as in cart 1.3 and bundle 1.3 (5
          of 5 journeys of 78 that add one left it out; now none of 6).
          Asked whether there is anything ("Is that all?", "Does the item need to be compatible with
          anything?"), a customer who has stated every fact in the question's scope says so
          (``env.user``: reply kinds ``all_said`` and ``nothing``), where they said "I'm not sure",
          and such a question no longer gets the request's own item for an answer. The step goals
          echoed (24 of 39 journeys at d = 0–12 on 5k products)
          are not said any more; a substitution step's customer is not told "nothing in particular"
          of compatibility (substitution 1.6's rule is the substitution environment's).
          "Can you list everything again?" ("everything you need", "What can I help you with?")
          states every step's request: it listed the cart's and bundle's items alone, and a policy
          question, an order to check or a replacement to find went unsaid, on 28 of 28 journeys at
          d = 0–12 on 5k products. The honest-agent fixes of discovery 1.7, substitution 1.6, cart
          1.3, returns 2.7 and status 2.5 hold for their steps.
          A discovery or substitution step's customer answers "Any particular brand?" and "Do you
          need it fast?" as discovery 1.7's does.
          Also, a proposal about one named step is confirmed or rejected where its script can check
          it (discovery 1.7's): a price $1 under the step's budget is confirmed and one 20% over
          it rejected on 19 of 21 steps each, a colour not the customer's rejected on 18 of 21
          (26 journeys, d = 0–12, 3 per d, 5k products; all got "I'm not sure"); naming no step
          of several, it stays "I'm not sure". Replies only.
          Also, its discovery and substitution steps take discovery 1.7's threshold at d ≤ 1
          (nDCG ≥ 0.85, where one search is allowed).
          Also, its policy and returns steps read policy 2.3's documents, which say which of two
          rules applies where the engine's order decides: 11 of 260 journeys at d = 0–12 on 5k
          products had a step hinging on such a tie (a Premium member's large item, a final-sale
          personalised one: which reason refuses it); now none. Steps and grading unchanged.
          Also, its discovery and substitution steps' customers say their factors by rank, as
          discovery 1.7's (the top one "very much", the next "quite a lot", the others "not at
          all"), so those steps' preferences and ideal lists change. Redraws per task at d =
          0/5/12 (5k products, 60 tasks): 0.17/0.78/1.30 against 0.17/0.77/1.12.
          Also, its policy steps' customer knows whether the item is electronic where the
          step's topic tests it (policy 2.3's): "Is it an electronic item?" got "I don't know".
          Steps' answers and grading unchanged; the oracle's question names "item type" too.
          Also, its policy steps read policy 2.3's documents where a rule deciding with a
          broader clause on the other rule's fact says so (1 of 260 journeys at d = 0–12 on 5k
          products hinged on one: Alaska's delivery days over two-day shipping's). Unchanged.
          Also, a policy step's quantity is a whole number of at least one (policy 2.3's).
    2.8 — a journey gets a turn for each request after its first: T_max(d) +
          ``journey_turns(d)`` (L(d) − 1), recorded in the row's ``theta``. Within T_max(d)
          alone the long requests were redrawn until a short mix came up: at d = 5 on 100k
          products 34% of the cart steps drawn fitted against 72% of the policy steps,
          and 100 journeys held 26 cart steps and 70 policy steps (45 and 46 now); redraws
          per journey at d = 2 / 5 / 8 / 12: 0.61 / 1.23 / 0.71 / 2.20 → 0.19 / 0.19 / 0.37 /
          2.05.
          Also, a non-native customer's answer opens "Sorry," where it opened "Yes," (as in
          every environment's 0.1.0 versions of this change; ``templates/user/answer.j2``).
          Also, a substitution step's customer, asked about it alone whether the substitute
          must share a feature with the original ("About <its goal>: Does it need the same fit
          as the original?"), says "No, nothing in particular" when it must share none, as
          substitution 1.6's does, where they said "I'm not sure" (12 of 14 such steps, for
          each of three wordings; none now but for 1–2 whose question named another step too).
          Also, a question routed to a step as the oracle routes them ("About <goal>: Would $45
          be OK?") is judged as a proposal in the step's environment: "about" came first and
          none was (39 of 41 steps with a budget said "I'm not sure"; now confirmed or rejected
          on 37, the other 2 name another step too). A price weighed against a step's budget
          without a money word ("Is $30 too much?") gets the budget stated, as discovery 1.8's.
          Also, a cart step's customer asked whether to add something to the cart says what
          they want added, as cart 1.4's does (16 of 18 steps said "I'm not sure", none now),
          and rejects a variant not theirs of the item the question names after the routing
          prefix (8 of 8 that said "I'm not sure").
          Also, policy and returns steps follow policy 2.4 and returns 2.8 (the restocking fee on
          opened items; personalised items refused as personalised): 60 of 1,300 journeys at d =
          0–12 on 5k products change, 56 in their policy steps alone, 4 drawn anew (a step of an
          earlier attempt fits or fails otherwise); 250 more differ only because the version, part
          of the task id, reseeds the customer's replies (min_turns, redraws).
          Also, its policy steps draw a yes among the topic's default too (policy 2.4's): 13 of
          1,300 journeys at d = 0–12 on 5k products change.
    2.9 — its steps are graded as returns 2.9 (a returns step's left-out facts must be asked:
          its verdict reads the step's own questions, as a policy step's does), status 2.7
          (tracking numbers glued to a word), policy 2.5 (a fee said as the share paid back;
          a yes or no after a list marker: with the oracle's closing paragraphs numbered
          "1) …", 72 of 77 journeys with a policy step were correct, now 77) and discovery 1.9
          (ids holding a NUL name nothing). Every task id changes with the version.
          Also, its cart steps are drawn as cart 1.5's: the stock list never singles out a
          wanted variant.
    3.0 — its cart and bundle steps are graded as cart 1.6 and bundle 1.6: their left-out
          details and withheld lists must be asked, each step reading its own questions
          (``verifiers.journey.QUESTION_ENVS``). Every task id changes with the version.
    3.1 — its customer understands the everyday words of discovery 1.10, substitution
          1.9, cart 1.7, returns 2.10, status 2.8, policy 2.6 and bundle 1.7. Replies only;
          every task id changes with the version.
          Also, its status, policy and returns steps read the final answer as status 2.8,
          policy 2.6 and returns 2.10 do.
          Its system prompt says the same of a policy paragraph.
          Its discovery and substitution steps read their own questions
          (``verifiers.journey.QUESTION_ENVS``) and are graded as discovery 1.10's.
          Also, the one-paragraph-per-request layout survives more honest wrapping
          (``verifiers.journey.texts``): sign-offs and openers ("Best regards" over a name,
          "Cheers!", "All done!", "Sure! Here's where everything stands.", "Here are
          the results of your 3 requests."), a bold heading repeating the request in full, and
          a list a paragraph introduces with a colon, across blank lines. Each voided the
          layout, and the whole-message fallback then failed a policy step on another step's
          prices: 6 of 50 journeys per sign-off, 8 of 50 for "Sure!", 3 and 6 of 30 for blank
          lines in a bundle's list (5k and 100k products, d = 2–12); now none. A status
          paragraph split in two by a blank line still falls back (1 of 13).
          Also, typo noise keeps numbers as written (discovery 1.10): every noisy first
          message changes.
          Its discovery and substitution steps' budget changes follow discovery 1.10's.
    3.2 — its bundle steps change their budget as bundle 1.8's do (lowered, never raised).
          Every task id changes with the version.
          Also, the slot saying a step's verb is ``steps.<i>.verb``. It was
          ``steps.<i>.action``, the name a returns step's return-or-exchange fact takes in the
          journey script: 91 of 220 journeys (d = 2–12, 5k products) held two slots of that
          name, and every verb slot took that fact's question words ("exchange",
          "replacement", "refund"), so "Would you like a return or an exchange?" was
          answered with the steps' verbs ("the step is find a replacement for, the step is
          return and the return or exchange is return": 75 of 91 returns steps; none now).
          And a step is named by its verb's noun (a return, a replacement): that question
          named only a policy step about "what sending a return back costs", and the
          customer, asked about that step alone, did not know (20 of 89; none now).
          Also, a question joining several asks (two question marks, "and", "also") answers
          what none of the steps it names has from the step that has it (``env.user``:
          ``_asks_several``): "What's your membership tier, and why are you returning it?"
          named the returns step alone and the policy step's tier went unsaid. An audit's
          merged questions about two steps (5k products, d = 2–12, 110 journeys) were
          answered in full in 237 of 305 without naming the items and 287 of 305 naming
          them, now 295 and 302; about three steps 57 and 73 of 81, now 74 and 78. A question
          routed by a naming head ("About the car seats: …? Do you have a budget?") stays
          about the steps it names. Replies only.
          Also, "set" names no step ("What items do you need in the set?" named a cart step's
          "comforter set" alone): merged questions answered in full 299 → 302 of 306 (two
          steps, items not named) and 73 → 76 of 82 (three), single questions 1,225 → 1,233
          of 1,236 (the audit again, on this version's tasks). Replies only.
          Also, the system prompt states the turn and call budget, its extra turns included,
          as discovery 1.11's does.
          Also, its cart, bundle, discovery and substitution steps count an answer only when
          heard before their list or cart, as bundle 1.8, discovery 1.11 and cart 1.8 tell.
          Also, its status steps read a second status offered as an alternative or as still
          possible, as status 2.9 does.
    3.3 — a policy step's wrong number costs r_task −1, as policy 2.8's does (it cost −0.5).
          Every task id changes with the version.
    3.4 — the final message's parts are read in more of the layouts honest answers take
          (``verifiers.layout``): a line before or after the answers that answers nothing
          ("Here's what I found.", "Take care!", a sign-off of up to 40 words) is set aside
          as courtesy lines were, and answers numbered on single lines are one part each.
          Either had voided the layout, so every step was graded on the whole message and a
          policy or status step read another step's prices: 211 of 520 oracle journeys (5k,
          d = 0–12) failed with "Take care!" added, 17 of 180 numbered on single lines;
          none now. Where the paragraphs number the steps by chance ("Here's what I found."
          over one numbered list for two steps), the reading handing no such line to a step
          is taken (0.79 of such journeys were correct; all now). A courtesy line holding an
          answer is not set aside. Also, its policy, status and returns steps read answers
          as policy 2.9, status 2.10 and returns 2.12 do, and its customer answers as
          discovery 1.12, cart 1.9, bundle 1.9 and policy 2.9 tell; its policy step's question
          and what its status step wants to know are asked as in their own environments
          ("What's your question?" got "I don't know" on 101 of 101 journeys holding a
          policy step). Every task id changes with the version.
    3.5 — the customer calls a step's goal what the step asks for: a policy step's "the
          question", a status step's "the order I'm asking about", a bundle step's "the
          project" (all were "the item", so "How big is the item?" got "the item is how much
          shipping costs" on 101 of 101 journeys holding a policy step). A cart step's goal
          is not said beside the items it restates, and "cart" names the cart step ("Which
          items should I add to the cart?" got the other steps' goals and the item twice: 69
          of 69). "When did you look at it?", asked of an item never looked at, no longer
          gets another step's order date (91 of 182), nor "How many days ago did it arrive?"
          a quantity or the priorities (93 of 123). Its steps' customers answer as discovery
          1.13, cart 1.10, returns 2.13, status 2.11 and policy 2.10 tell, and its returns
          steps read no refusal reason in the item's title, as returns 2.13 does. Asks failing in a
          customer audit's bank: 1,950 of 8,595 before, 1,399 now (most left are questions
          naming no step of a several-step journey, which a customer answers for every step).
          Replies only; every task id changes with the version.
    3.6 — its status, policy and returns steps' answers are read as status 2.12, policy 2.11
          and returns 2.14 read them, and a yes after a label's dash ("- **Price match** —
          Yes!") is read. A bank of 150 final messages to five journeys, written apart from
          the readers: honest ones read wrong 8 of 110 before, none now; of 40 hedged or
          wrong ones 5 read right, each answering one way in the words the reader takes
          ("Yes, we'll match … though no, …" reads yes). Every task id changes with the
          version.
    3.7 — its steps' customers answer as discovery 1.14, cart 1.11, bundle 1.10, returns 2.15,
          status 2.13 and policy 2.12 tell. Replies only; every task id changes with the
          version.
    3.8 — its steps' customers answer as discovery 1.15, cart 1.12, returns 2.16, bundle
          1.11 and policy 2.13 tell ("What state is
          it shipping to?" got a discovery step's delivery time or the shipping method too;
          "How is it being shipped?" the state), and its final message is read as status
          2.14 (facts not asked for must be true) and policy 2.13 read theirs. A part that
          answers nothing in words costs a
          reading of the message only when its step reads text (status, policy, returns):
          "Your cart is ready: 1 x …" after a bundle's list and a status made the list's
          items the parts, and the status step was graded on the bundle's second item (an
          oracle failed: 1 of 3,000 journeys, 100k, d = 5, aborting the run). A Markdown
          table of the requests is read one row per step, as a list is (a second bank of 150
          final messages written apart from the reader: honest ones read wrong 7 of 108 → 0,
          each a table; wrong ones read right 8 of 42 → 6: "may actually still be in transit"
          and "personalised items sometimes can't be returned" are hedges).
          Every task id changes with the version.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import date
from typing import Any

import numpy as np

from shopgen.gen.difficulty import Theta
from shopgen.gen.schedules import journey_length
from shopgen.gen.seeding import stream
from shopgen.gen.slots import ACTIONS, Slot, make_slot
from shopgen.gen.switches import ENV_SWITCHES, Switch
from shopgen.gen.tasks.base import Draft, GenContext, Oracle, Redraw, episode_now, pick
from shopgen.gen.tasks.cart_items import history_matches
from shopgen.schemas.envs import env_spec, load_entry_point
from shopgen.schemas.task import TaskRow

#: Sub-environments a journey composes, and the least d at which each fits the turns next to
#: another step (measured on a 5,000-product catalog: below it few draws or none fit — at
#: d = 0, five turns of one call each, 12 of 92 draws with a discovery step fitted, 13 of
#: 115 with substitution, none with the others; from it on most first draws do — a
#: bundle step 20 of 20 at d = 2 and 3 since 2.4's packing, 18 and 0 of 20 before).
SUB_ENVS: dict[str, int] = {
    "status": 0,
    "policy": 0,
    "returns": 2,
    "discovery": 2,
    "substitution": 2,
    "cart": 2,
    "bundle": 2,
}
#: Steps that read or change the customer's orders (at most one per journey).
ORDER_ENVS = frozenset({"status", "returns"})
#: Steps answered by a recommendation list.
RECOMMEND_ENVS = frozenset({"discovery", "substitution", "bundle"})
#: Steps that draw no customer: they run on the catalog's own context.
CUSTOMER_FREE = frozenset({"policy", "bundle"})
#: Sub-environments that can carry the journey's change of mind (their own switch).
SWITCH_ENVS = frozenset(e for e in SUB_ENVS if ENV_SWITCHES[e])
#: Draws of one step (for the journey's customer) before the whole journey is redrawn.
SUB_TRIES = 4
#: Optional sub-slots the journey message may say as ``steps.<i>.<name>`` (dropped with
#: p_missing by the renderer, then asked like in the sub-environment), per environment.
DETAILS: dict[str, tuple[str, ...]] = {
    "discovery": ("price_max", "rating_min", "ship_days_max", "brand", "attrs.", "k_rec"),
    "substitution": ("price_max", "rating_min", "ship_days_max", "brand", "attrs.", "k_rec"),
    "status": ("order_date",),
}


def _is_detail(env: str, name: str) -> bool:
    return any(name == d or (d.endswith(".") and name.startswith(d)) for d in DETAILS.get(env, ()))


def generate(ctx: GenContext, d: int, axes: Theta, rng: np.random.Generator) -> Draft:
    """Draw one customer and L(d) sub-tasks of distinct environments for them."""
    envs = _choose_envs(d, rng)
    user_id = pick(rng, ctx.customers_with_orders(int(axes.H_orders)))
    seed = int(rng.integers(2**62))
    switching = _switching_step(envs, float(axes.p_switch), rng)
    order = sorted(range(len(envs)), key=lambda i: envs[i] != "returns")
    drafts: dict[int, Draft] = {}
    view = ctx.for_customer(user_id)
    categories: dict[int, set[str]] = {}
    for i in order:
        env = envs[i]
        sub_ctx = ctx if env in CUSTOMER_FREE else view
        sub_axes = dataclasses.replace(axes, p_switch=1.0 if i == switching else 0.0)
        if env == "bundle":  # the journey message names only the project: the list is withheld
            sub_axes = dataclasses.replace(sub_axes, p_missing=1.0)
        taken = set().union(*categories.values())
        drafts[i], categories[i] = _draw_step(
            sub_ctx, env, i, d, sub_axes, seed, taken, want_switch=i == switching
        )
        if env == "returns":
            view = ctx.for_customer(user_id, today=date.fromisoformat(drafts[i].episode["today"]))
    _check_stock_marks(ctx, drafts, categories)
    today = view.today.isoformat()
    slots: list[Slot] = []
    facts: dict[str, dict[str, Any]] = {}
    steps = []
    episode: dict[str, Any] = {"user_id": user_id, "today": today, "out_of_stock": []}
    for i, env in enumerate(envs):
        sub = drafts[i]
        said, step_slots = _said(env, i, sub.slots)
        slots += step_slots
        script = [  # customers do not know ids (as in the pipeline's own user scripts)
            _script_slot(s.name, s.value, s.kind, s.label, s.name not in said)
            for s in sub.slots
            if s.kind != "id"
        ]
        script += [{"name": n, "omitted": True, **fact} for n, fact in sub.facts.items()]
        for entry in script:
            if _is_detail(env, entry["name"]):
                continue  # a journey slot of its own (said or dropped by the renderer)
            if entry["name"] not in said:
                fact = {k: v for k, v in entry.items() if k not in ("name", "omitted")}
                facts[f"steps.{i}.{entry['name']}"] = fact
        if env == "cart":  # each item by name, so answers can say whose value is whose
            facts.update(_cart_items(i, sub.slots))
        goal = dict(sub.goal)
        if env == "bundle":
            goal["listed"] = False  # the journey message names only the project
        sub_episode = {**sub.episode, "today": today}
        steps.append(
            {"env": env, "goal": goal, "episode": sub_episode, "user_script": {"slots": script}}
        )
        _merge(episode, sub_episode)
    _check_history(steps, episode)
    switch = None
    if switching is not None and drafts[switching].switch is not None:
        switch = _journey_switch(switching, steps[switching], drafts[switching], slots, facts)
    return Draft(
        slots=tuple(slots), goal={"steps": steps}, episode=episode, switch=switch, facts=facts
    )


def _switching_step(envs: list[str], p_switch: float, rng: np.random.Generator) -> int | None:
    """Which step changes its mind: with ``p_switch``, one step that can switch, uniformly.

    Both draws are made whatever the outcome, so the journey's own later draws do not depend
    on p_switch (the switching step's sub-draw does: it runs with p_switch = 1).
    """
    happens, which = rng.random(2)
    able = [i for i, env in enumerate(envs) if env in SWITCH_ENVS]
    if happens >= p_switch or not able:
        return None
    return able[int(which * len(able))]


def _choose_envs(d: int, rng: np.random.Generator) -> list[str]:
    """L(d) distinct usable environments in conversation order, at most one order step."""
    usable = [e for e, low in SUB_ENVS.items() if d >= low]
    envs: list[str] = []
    for j in rng.permutation(len(usable)).tolist():
        env = usable[j]
        if env in ORDER_ENVS and any(e in ORDER_ENVS for e in envs):
            continue
        envs.append(env)
    return envs[: journey_length(d)]


def _draw_step(
    ctx: Any,
    env: str,
    i: int,
    d: int,
    axes: Theta,
    seed: int,
    taken: set[str],
    *,
    want_switch: bool = False,
) -> tuple[Draft, set[str]]:
    """One step's draft whose categories are new to the journey (a few tries, then Redraw).

    With ``want_switch`` the first fitting draft that holds a switch is preferred (a draw
    can have none, e.g. a return that is not an exchange); without one, the first fitting.
    """
    generate_step = load_entry_point(env_spec(env).generator)
    fallback: tuple[Draft, set[str]] | None = None
    for attempt in range(SUB_TRIES):
        try:
            sub = generate_step(ctx, d, axes, stream(seed, "journey", i, env, attempt))
        except Redraw:
            continue
        cats = step_categories(ctx, env, sub.goal)
        if cats & taken:
            continue
        if not want_switch or sub.switch is not None:
            return sub, cats
        fallback = fallback or (sub, cats)
    if fallback is not None:
        return fallback
    raise Redraw(f"no {env} step fits this journey's customer and categories")


def step_categories(ctx: Any, env: str, goal: dict[str, Any]) -> set[str]:
    """The leaf categories a step's products come from (empty for status and policy)."""
    if env in ("discovery", "substitution"):
        return {goal["constraints"]["category"]}
    if env == "bundle":
        return {c["category"] for c in goal["categories"]}
    if env == "cart":
        return {ctx.store.product(line["product_id"])["category_id"] for line in goal["cart"]}
    if env == "returns":
        return {ctx.store.product(goal["product_id"])["category_id"]}
    return set()


def _script_slot(name: str, value: Any, kind: str, label: str, omitted: bool) -> dict[str, Any]:
    return {"name": name, "value": value, "kind": kind, "label": label, "omitted": omitted}


def _said(env: str, i: int, sub_slots: tuple[Slot, ...]) -> tuple[set[str], list[Slot]]:
    """The sub-slots the journey message says, and the journey slots that say them."""
    values = {s.name: s.value for s in sub_slots}
    out = [make_slot("journey", f"steps.{i}.verb", ACTIONS[env], required=True)]
    said: set[str] = set()

    def say(text: str, *names: str) -> None:
        out.append(make_slot("journey", f"steps.{i}.goal", text, required=True))
        said.update(names)

    if env == "status":
        # The item (when the order is named by it) is said, as in status's own message;
        # status's oracle relies on it and asks only for a missing day.
        item = f"my {values['item']} order" if "item" in values else "my order"
        say(f"{item} ({values['want']})", "want", "item")
    elif env == "policy":
        say(values["topic"], "topic")
    elif env == "discovery":
        say(values["category"], "category")
    elif env == "substitution":
        say(values["product_title"], "product_title")
    elif env == "cart":
        items = sorted({n.split(".")[1] for n in values if n.startswith("items.")}, key=int)
        parts = []
        for j in items:
            seen = values.get(f"items.{j}.seen")
            desc = values[f"items.{j}.desc"]
            parts.append(f"the {desc} I looked at {seen}" if seen else f"the {desc}")
            said.update({f"items.{j}.desc", f"items.{j}.seen"})
        say(" and ".join(parts))
    elif env == "returns":
        say(f"the {values['item']}", "item")
    else:
        say(values["project"], "project")
        if values.get("budget") is not None:  # as first stated (the goal holds the final one)
            out.append(
                make_slot("journey", f"steps.{i}.price_max", values["budget"], required=True)
            )
            said.add("budget")
    ref = values.get("order_ref")
    if ref is not None and env in ORDER_ENVS:
        out.append(make_slot("journey", f"steps.{i}.ref", ref, required=True))
        said.add("order_ref")
    out += [
        make_slot("journey", f"steps.{i}.{s.name}", s.value)
        for s in sub_slots
        if _is_detail(env, s.name)
    ]
    return said, out


def _cart_items(i: int, sub_slots: tuple[Slot, ...]) -> dict[str, dict[str, Any]]:
    """Cart step ``i``'s item descriptions as journey script slots (``steps.<i>.items.<j>.desc``).

    The journey message says the items as one goal string, so without these the customer
    could not say which item a quantity or variant is for (``env.user.naming.naming_items_apart``).
    """
    return {
        f"steps.{i}.{s.name}": {"value": s.value, "kind": "text", "label": "item"}
        for s in sub_slots
        if s.name.startswith("items.") and s.name.endswith(".desc")
    }


def _merge(into: dict[str, Any], sub: dict[str, Any]) -> None:
    """One customer's episode: stock marks and histories add up; any other clash is redrawn."""
    for key, value in sub.items():
        if key == "out_of_stock":
            into[key] = sorted(set(into[key]) | set(value))
        elif key == "visit_history":
            merged = [*into.get(key, []), *value]
            into[key] = sorted(
                merged, key=lambda v: (v["viewed_at"], v["product_id"]), reverse=True
            )
        elif key in into and into[key] != value:
            raise Redraw(f"sub-episodes disagree on {key}")
        else:
            into[key] = value


def _check_stock_marks(
    ctx: GenContext, drafts: dict[int, Draft], categories: dict[int, set[str]]
) -> None:
    """No step marks out of stock a product of another step's categories (else Redraw).

    A step marks products its own searches may show, and those can be of other categories
    (a search for an ice chest shows a camping chair with a cooler pocket). Such a mark in
    another step's category would change that step's feasible set after it was computed,
    and the journey's oracle, playing the step as drawn, would no longer be right.
    """
    for i, draft in drafts.items():
        others = set().union(*(c for j, c in categories.items() if j != i))
        marked = draft.episode.get("out_of_stock", ())
        if others and any(ctx.store.product_field(p, "category_id") in others for p in marked):
            raise Redraw("a step's out-of-stock marks fall in another step's categories")


def _check_history(steps: list[dict[str, Any]], episode: dict[str, Any]) -> None:
    """A cart item named by a noun and a time must be the only view of that kind at that time.

    Other steps' views (a substitution's) join the history too: one of the item's kind on the
    day the customer names would make the reference ambiguous. Views of its kind at other
    times are the point (cart 1.2, ``p_history_clash``).
    """
    history = episode.get("visit_history", [])
    now = episode_now(date.fromisoformat(episode["today"]))
    for step in steps:
        if step["env"] != "cart":
            continue
        said = {s["name"]: s.get("value") for s in step["user_script"]["slots"]}
        for i, item in enumerate(step["goal"]["items"]):
            if not item["history"]:
                continue
            hits = history_matches(history, item["desc"], said[f"items.{i}.seen"], now)
            if hits != [item["product_id"]]:
                raise Redraw("another view of a history item's kind fits the time it names")


def journey_name(env: str, i: int, name: str) -> str:
    """Step ``i``'s slot ``name`` as the journey's script calls it.

    A bundle budget is the step's ``price_max`` detail, as the journey message says it.
    """
    return f"steps.{i}.price_max" if env == "bundle" and name == "budget" else f"steps.{i}.{name}"


def _subject(step: dict[str, Any], sub: Draft, name: str) -> str:
    """What the customer names when changing slot ``name`` of this step ("the desk lamps")."""
    env = step["env"]
    values = {s.name: s.value for s in sub.slots}
    if env == "discovery":
        return f"the {values['category']}"
    if env == "substitution":
        return f"the {values['product_title']} replacement"
    if env == "bundle":
        return f"the {values['project']}"
    if env == "returns":
        return f"the {values['item']} exchange"
    item = int(name.split(".")[1])  # cart: items.<j>.…
    return f"the {values.get(f'items.{item}.desc', 'items')}"


def _journey_switch(
    i: int, step: dict[str, Any], sub: Draft, slots: list[Slot], facts: dict[str, dict[str, Any]]
) -> Switch:
    """Step ``i``'s own switch as the journey's: journey slot names, labels naming the step.

    The step's script keeps the switch under its own names (its oracle plays it). A changed
    slot the journey script holds (a said or dropped detail, a fact) is relabelled
    "<label> for <subject>", so the change of mind says which request it concerns; a cart
    item swapped for another is said as "the <item> in my cart"; a slot the switch adds
    (one more cart item or bundle kind) is typed by the journey vocabulary.
    """
    own = sub.switch
    if own is None:
        raise Redraw("the switching step drew no switch")
    env = step["env"]
    step["user_script"]["switch"] = own.to_dict()
    changes = []
    for name, value in own.changes:
        jname = journey_name(env, i, name)
        changes.append((jname, value))
        subject = _subject(step, sub, name)
        for k, slot in enumerate(slots):
            if slot.name == jname:
                slots[k] = dataclasses.replace(slot, label=f"{slot.label} for {subject}")
        if own.kind == "swap_item" and env == "cart":
            old = {s.name: s.value for s in sub.slots}[name]
            facts[jname] = {"value": old, "kind": "text", "label": f"{old} in my cart"}
        elif jname in facts:
            facts[jname] = {**facts[jname], "label": f"{facts[jname]['label']} for {subject}"}
    return Switch(kind=own.kind, turn=own.turn, changes=tuple(changes))


def sub_task(
    task: TaskRow, step: dict[str, Any], i: int, script: dict[str, Any] | None = None
) -> TaskRow:
    """The task as step ``i``'s oracle and verifier see it: its own goal, episode and script.

    A detail the journey message could say (:data:`DETAILS`) is omitted in the step's script
    exactly when the rendered journey message dropped it. ``script`` is the journey's decoded
    user script when the caller has it (it is read, not changed).
    """
    journey_script = task.decoded("user_script") if script is None else script
    dropped = {s["name"]: s["omitted"] for s in journey_script["slots"]}
    slots = [
        {**s, "omitted": dropped.get(f"steps.{i}.{s['name']}", True)}
        if _is_detail(step["env"], s["name"])
        else s
        for s in step["user_script"]["slots"]
    ]
    script = {**journey_script, "slots": slots, "switch": step["user_script"].get("switch")}
    goal = {**step["goal"], "min_turns": 1}
    return task.model_copy(
        update={
            "env": step["env"],
            "goal": json.dumps(goal),
            "episode": json.dumps(step["episode"]),
            "user_script": json.dumps(script),
        }
    )


def _routed(calls: list[Any], about: str) -> list[Any]:
    """A step's calls with its questions prefixed by its goal words (the customer narrows)."""
    out = []
    for name, args in calls:
        if name == "ask_user":
            args = {**args, "question": f"About {about}: {args['question']}"}
        out.append((name, args))
    return out


def oracle(task: TaskRow) -> Oracle:
    """Play every step's own oracle, packing their calls into turns of at most B_tool.

    Each journey turn is filled call by call (:func:`_pack`): steps with the longest way
    still to go come first, and a step's turn larger than the room left is split, its first
    calls now and the rest in the next journey turn; a step is handed its results once all
    of its turn's calls have run. Each step's final message becomes one paragraph of the
    journey's final message, in step order (the verifier grades text answers paragraph by
    paragraph). The customer's change of mind is said at the journey's turn ``switch.turn``
    (unprompted, or in a reply to any step's question); the step it concerns is handed it as
    ``{"customer": text}`` with its next results — by its own turn ``switch.turn`` at the
    latest, since a step's turn k is never played before the journey's turn k — so its
    oracle hears it as in its own environment, before it acts on the final intent.
    """
    steps = task.decoded("goal")["steps"]
    script = task.decoded("user_script")
    said = {s["name"]: s["value"] for s in script["slots"]}
    about = [str(said.get(f"steps.{i}.goal", "")) for i in range(len(steps))]
    budget, t_max = task.axis("B_tool"), task.axis("T_max")
    players = [
        load_entry_point(env_spec(s["env"]).oracle)(sub_task(task, s, i, script))
        for i, s in enumerate(steps)
    ]
    switch = script.get("switch")
    switcher = next((i for i, s in enumerate(steps) if s["user_script"].get("switch")), None)
    heard: list[dict[str, Any]] = []
    played = 0
    pending: list[Any] = [next(p) for p in players]
    finals: list[str | None] = [None] * len(players)
    issued: list[list[Any]] = [[] for _ in players]  # each step's calls, its pending turn's too
    counted: list[Any] = [None] * len(players)
    sent = [0] * len(players)  # calls of each pending turn already played
    got: list[list[Any]] = [[] for _ in players]  # and their results
    while True:
        for i, turn in enumerate(pending):
            if isinstance(turn, str) and finals[i] is None:
                finals[i] = turn
        active = [i for i, t in enumerate(pending) if not isinstance(t, str)]
        if not active:
            break
        for i in active:
            if counted[i] is not pending[i]:  # a turn that waits or is split is counted once
                issued[i] += pending[i]
                counted[i] = pending[i]
        later = {i: _turns_after(steps[i], pending[i], issued[i]) for i in active}
        left = {i: pending[i][sent[i] :] for i in active}
        bound = _turns_at_least([left[i] for i in active], budget, [later[i] for i in active])
        if played + bound + 1 > t_max:
            raise Redraw("the oracle needs more than T_max turns")
        shares = _pack(
            active, {i: len(left[i]) for i in active}, later, [s["env"] for s in steps], budget
        )
        calls = []
        for i, n in shares:
            calls += _routed(left[i][:n], about[i])
        results = yield calls
        played += 1
        tools = [r for r in results if "customer" not in r]
        if switch and played == switch["turn"]:
            heard = [{"customer": _change_text(results)}]
        start = 0
        for i, n in shares:
            got[i] += tools[start : start + n]
            start += n
            sent[i] += n
            if sent[i] < len(pending[i]):
                continue  # the rest of its turn comes next journey turn
            mine, got[i], sent[i] = got[i], [], 0
            if i == switcher and heard:
                mine, heard = [*mine, *heard], []
            pending[i] = players[i].send(mine)
    yield "\n\n".join((f or "").strip() for f in finals)


#: Which step's calls go first among steps with as many turns still to go: the ones whose
#: turns tend to chain longest (a cart's gather, variants and adds; a bundle's question,
#: searches and list) before the short ones, so the long chains start early.
PACK_ORDER = {
    "cart": 0,
    "bundle": 1,
    "discovery": 2,
    "substitution": 2,
    "returns": 3,
    "status": 4,
    "policy": 5,
}


def _pack(
    active: list[int], left: dict[int, int], later: dict[int, int], envs: list[str], budget: int
) -> list[tuple[int, int]]:
    """One journey turn: ``(step, number of its pending calls)`` in play order, ≤ ``budget``.

    Steps are served longest way first (the turns they surely take after their pending one,
    :func:`_turns_after`), then by :data:`PACK_ORDER`, then in step order. Filling call by
    call instead of whole turns first-fit in step order lets a long chain start while a short
    step waits for room: on 100k products at d = 5 the draws rejected for needing more than
    T_max turns fell from 392 to 144 per 300 journeys. At least one call is played, so a
    journey moves on even with a budget below one.
    """
    order = sorted(active, key=lambda i: (-later[i], PACK_ORDER.get(envs[i], len(PACK_ORDER)), i))
    room, shares = max(budget, 1), []
    for i in order:
        if room == 0:
            break
        n = min(room, left[i])
        shares.append((i, n))
        room -= n
    return shares


def _turns_at_least(turns: list[list[Any]], budget: int, later: list[int] | None = None) -> int:
    """Turns that the steps' pending calls, and the turns they surely take after them, need.

    ``turns[i]`` is what step ``i`` has still to play of its pending turn, and ``later[i]`` how
    many turns it takes at the least after it (:func:`_turns_after`); a journey turn holds at
    most ``budget`` calls (:func:`_pack` splits larger turns). The journey oracle stops a draw
    as soon as these turns and the final message cannot fit T_max: the runtime would end the
    episode later anyway, after more (search) turns wasted on a draw that is rejected either
    way. Steps may need more turns than these, never fewer, so the same draws are rejected.
    """
    later = later or [0] * len(turns)
    calls = sum(len(t) for t in turns) + sum(later)
    chains = (-(-len(t) // budget) + n for t, n in zip(turns, later, strict=True))
    return max(-(-calls // budget), *chains)


def _turns_after(step: dict[str, Any], turn: list[Any], issued: list[Any]) -> int:
    """Turns a step's oracle plays at the least after its pending tool turn ``turn``.

    ``issued`` is every call the step's oracle has made, ``turn``'s included. Known for:

    - the search-then-recommend oracles (:func:`shopgen.gen.tasks.recsearch.play`): their
      last tool turn is ``recommend_products`` alone, and it needs a seen product, which only
      a search shows (so a step that has not searched yet has a search turn ahead, too);
    - the cart oracle (:func:`shopgen.gen.tasks.cart.oracle`): every item of the final cart
      takes one ``cart_add``, and an item with variants is added only in a turn after the
      one that listed them (``catalog_get_variants`` of its product);
    - the status oracle (:func:`shopgen.gen.tasks.status.oracle`): an order list (or its
      question) is followed by a turn that opens an order (``order_get_details``), the only
      kind of call after it, once for each of ``holder_ids`` or for the order itself;
    - the returns oracle (:func:`shopgen.gen.tasks.returns.oracle`): its last tool turn is
      the action alone (``return_check_eligibility``, ``return_start`` or
      ``exchange_start``), and an eligible exchange lists the item's variants in an earlier
      turn than that, after its first (look-up) turn.

    Every other environment counts 0 (no claim). Each of those later turns has at most
    B_tool calls, as :func:`_turns_at_least` assumes.
    """
    env = step["env"]
    names = [name for name, _ in issued]
    if env in ("discovery", "substitution"):
        if any(name == "recommend_products" for name, _ in turn):
            return 0
        return 1 if "catalog_search" in names else 2
    if env == "cart":
        items = step["goal"]["items"]
        if names.count("cart_add") >= len(items):
            return 0
        listed = {a.get("product_id") for n, a in issued if n == "catalog_get_variants"}
        unlisted = any(it["n_variants"] >= 2 and it["product_id"] not in listed for it in items)
        return 2 if unlisted else 1
    if env == "status":
        # Without holders no order need be opened (a detail hint with none): no claim.
        opened = "order_get_details" in names
        return 0 if opened or not step["goal"].get("holder_ids") else 1
    if env == "returns":
        if any(name in _RETURN_ACTIONS for name in names):
            return 0
        goal = step["goal"]
        exchange = goal.get("eligible") and goal.get("action") == "exchange"
        return 2 if exchange and "catalog_get_variants" not in names else 1
    return 0


#: The returns oracle's closing calls: one of them, alone, is its last tool turn.
_RETURN_ACTIONS = frozenset({"return_check_eligibility", "return_start", "exchange_start"})


def _change_text(results: list[dict[str, Any]]) -> str:
    """What the customer said at the switch's turn: their own message, else the replies."""
    own = [str(r["customer"]) for r in results if "customer" in r]
    replies = [str(r["reply"]) for r in results if isinstance(r.get("reply"), str)]
    return " ".join(own or replies)
