"""Changes to a store's notification settings made at the same moment (the API and the dashboard,
two tabs) each keep the others': every PATCH read the settings, changed its kind and wrote them all
back, so a concurrent one's change was lost (found on the real stack: eight kinds turned off at
once, up to five stayed on)."""
from core.clock import utcnow
from models.base import db
from models.mail import MERCHANT_KINDS
from services.mail import store_notifications
from tests.support.concurrency import run_at_once

ROUNDS = 3


def test_kinds_turned_off_at_once_all_stay_off(store):
    for _ in range(ROUNDS):
        with db.connection_context():
            store_notifications.update(store.id, now=utcnow(), recipients=["shop@example.com"],
                                       kinds={kind: True for kind in MERCHANT_KINDS})
        pending = list(MERCHANT_KINDS)        # each thread turns one off (list.pop is atomic)

        def turn_off():
            with db.connection_context():
                store_notifications.update(store.id, now=utcnow(), kinds={pending.pop(): False})

        assert run_at_once(turn_off, len(MERCHANT_KINDS)) == []
        with db.connection_context():
            chosen = store_notifications.settings_of(store.id)
        assert [kind for kind, wanted in chosen["kinds"].items() if wanted] == []
        assert chosen["recipients"] == ["shop@example.com"]
