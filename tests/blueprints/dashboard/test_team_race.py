"""Two owners demoting each other at once: the store keeps one owner (the team's changes run under
the store's row lock and read the actor's role again under it)."""
from __future__ import annotations

import threading

from core.errors import Forbidden
from models.base import db
from models.people import Membership
from services.accounts import people
from tests.support.dashboard import make_member


def test_two_owners_demoting_each_other_at_once_leave_one_owner(store, monkeypatch):
    first, second = make_member(store, "a@example.com", "owner"), make_member(store, "b@example.com", "owner")
    # Each change waits, once it has read the actor's role, for the other to read too: without the
    # lock both read "owner" and both demote. With it the other is still waiting for the lock, so the
    # wait gives up after a moment and the second reads what the first wrote.
    both_read = threading.Barrier(2, timeout=2)
    read_role = people.role_in

    def role_then_wait(user, store_id):
        role = read_role(user, store_id)
        try:
            both_read.wait()
        except threading.BrokenBarrierError:
            pass
        return role

    monkeypatch.setattr(people, "role_in", role_then_wait)
    outcomes = []

    def demote(actor, target):
        try:
            with db.connection_context():
                people.change_role(store, target.id, "admin", by=actor)
            outcomes.append("demoted")
        except Forbidden:
            outcomes.append("refused")

    racers = [threading.Thread(target=demote, args=pair) for pair in ((first, second), (second, first))]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(timeout=30)
    assert sorted(outcomes) == ["demoted", "refused"]
    with db.connection_context():
        owners = Membership.select().where((Membership.store == store.id) & (Membership.role == "owner")).count()
    assert owners == 1
