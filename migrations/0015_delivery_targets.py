"""Due deliveries read target by target (issue 25).

A delivery claim needs, for each target (an endpoint; a store's legacy callbacks count as one),
only its few oldest due deliveries: no target may have more than its cap in flight. It used to
rank every due delivery to find them, so a backlog of tens of thousands (a replay, an outage's
catch-up) made every claim slower, and claims take turns. This index lists the pending
deliveries by target, then by when they are due: a claim walks the targets that have any and
reads a handful from each.
"""


def up(migrator, db):
    db.execute_sql("CREATE INDEX webhook_delivery_target_due ON webhook_delivery "
                   "(COALESCE(endpoint_id, store_id), next_attempt_at, id) WHERE status = 'pending'")
