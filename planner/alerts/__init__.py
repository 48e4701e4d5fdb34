"""Alerts: rules in the config judged on the current offers after every refresh and on demand, told
once to e-mail and to WeCom, DingTalk and Feishu group robots.

``rules`` reads and checks ``[[alerts]]`` and ``[channels.NAME]``; ``offers.current_offers`` is the one
door to prices and stock; ``conditions`` judges one offer; ``check`` keeps the state and sends;
``message`` writes the text; ``channels`` talks to each platform; ``digest`` is the nightly summary.
"""
