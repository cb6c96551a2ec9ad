-- A delivery claim on PostgreSQL (delivery_claim.py), one round trip: claims are serialised by an
-- advisory lock (so the in-flight counts cannot change under a claim); then, in one statement,
-- what each target (an endpoint; a store's legacy callbacks count as one) and each store holds in
-- flight, each target's oldest due deliveries up to its room, each store's oldest of those up to
-- its room (its cap, shrunk to an even part of `all_stores` once many stores are being served),
-- store by store in turn; the claim of those rows, and what their attempts need.
-- delivery_claim.sqlite.sql is the same claim on SQLite: the parts they share are written alike
-- (tests/services/webhooks/test_claim_texts.py). Two claims: `claim_due`, a delivery run's, chooses
-- among every due delivery (ranked while few, else each target's oldest few, read target by target);
-- `claim_new`, a fan-out's, only among the deliveries it just created (one text with both would
-- be planned for the larger, and read events and stores by scanning them).
-- name: claim_due
SELECT pg_advisory_xact_lock(%(lock_key)s);
WITH RECURSIVE in_flight AS (
    SELECT store_id, COALESCE(endpoint_id, store_id) AS target, COUNT(*) AS held,
           MIN(last_attempt_at) AS oldest_start
    FROM webhook_delivery
    WHERE status = 'pending' AND claim_token IS NOT NULL AND next_attempt_at > %(now)s
    GROUP BY store_id, COALESCE(endpoint_id, store_id)
), target_held AS (
    SELECT target, SUM(held) AS held FROM in_flight GROUP BY target
), store_held AS (
    SELECT store_id, SUM(held) AS held, MIN(oldest_start) AS oldest_start FROM in_flight GROUP BY store_id
), due_count AS (
    SELECT COUNT(*) AS due FROM (SELECT 1 FROM webhook_delivery
                                 WHERE status = 'pending' AND next_attempt_at <= %(now)s
                                 LIMIT %(rank_all_up_to)s + 1) AS sample
), targets(target) AS (
    SELECT * FROM (SELECT COALESCE(endpoint_id, store_id) FROM webhook_delivery WHERE status = 'pending'
                   ORDER BY COALESCE(endpoint_id, store_id) LIMIT 1) AS first_target
    WHERE (SELECT due FROM due_count) > %(rank_all_up_to)s
    UNION ALL
    SELECT (SELECT COALESCE(p.endpoint_id, p.store_id) FROM webhook_delivery p
            WHERE p.status = 'pending' AND COALESCE(p.endpoint_id, p.store_id) > t.target
            ORDER BY COALESCE(p.endpoint_id, p.store_id) LIMIT 1)
    FROM targets t WHERE t.target IS NOT NULL
), candidates AS (
    SELECT d.id, d.store_id, d.next_attempt_at, COALESCE(d.endpoint_id, d.store_id) AS target
    FROM webhook_delivery d
    WHERE (SELECT due FROM due_count) <= %(rank_all_up_to)s AND d.status = 'pending' AND d.next_attempt_at <= %(now)s
    UNION ALL
    SELECT d.id, d.store_id, d.next_attempt_at, t.target
    FROM targets t CROSS JOIN LATERAL (
        SELECT x.id, x.store_id, x.next_attempt_at FROM webhook_delivery x
        WHERE x.status = 'pending' AND COALESCE(x.endpoint_id, x.store_id) = t.target AND x.next_attempt_at <= %(now)s
        ORDER BY x.next_attempt_at, x.id LIMIT %(per_target)s + 1) d
    WHERE t.target IS NOT NULL
), by_target AS (
    SELECT c.id, c.store_id, c.next_attempt_at,
           ROW_NUMBER() OVER (PARTITION BY c.target ORDER BY c.next_attempt_at, c.id) AS place,
           COUNT(*) OVER (PARTITION BY c.target) AS target_due,
           %(per_target)s - COALESCE(t.held, 0) AS target_room
    FROM candidates c LEFT JOIN target_held t ON t.target = c.target
), stores_due AS (
    SELECT COUNT(DISTINCT store_id) AS stores FROM by_target
), stores_busy AS (
    SELECT COUNT(*) AS stores FROM (SELECT store_id FROM by_target UNION SELECT store_id FROM store_held) AS busy
), by_store AS (
    SELECT b.id, b.next_attempt_at, b.target_due > b.target_room AS target_left,
           ROW_NUMBER() OVER (PARTITION BY b.store_id ORDER BY b.next_attempt_at, b.id) AS turn,
           COUNT(*) OVER (PARTITION BY b.store_id) AS store_due,
           CASE WHEN n.stores = 1 AND (s.oldest_start IS NULL OR s.oldest_start >= %(quick_since)s)
                THEN %(per_store_alone)s
                WHEN %(all_stores)s / m.stores < 1 THEN 1
                WHEN %(all_stores)s / m.stores < %(per_store)s THEN %(all_stores)s / m.stores
                ELSE %(per_store)s END - COALESCE(s.held, 0) AS store_room
    FROM by_target b LEFT JOIN store_held s ON s.store_id = b.store_id CROSS JOIN stores_due n
         CROSS JOIN stores_busy m
    WHERE b.place <= b.target_room
), chosen AS (
    SELECT d.id, d.claim_token AS previous_token, d.attempts AS previous_attempts,
           d.last_attempt_at AS previous_start, (c.target_left OR c.store_due > c.store_room) AS left_behind
    FROM (SELECT * FROM by_store WHERE turn <= store_room ORDER BY turn, next_attempt_at, id LIMIT %(limit)s) AS c
    JOIN webhook_delivery d ON d.id = c.id
    FOR UPDATE OF d SKIP LOCKED
), claimed AS (
    UPDATE webhook_delivery SET claim_token = %(token)s, attempts = webhook_delivery.attempts + 1,
           last_attempt_at = %(now)s, next_attempt_at = %(lease_end)s, updated_at = %(now)s
    FROM chosen WHERE webhook_delivery.id = chosen.id
    RETURNING webhook_delivery.id, webhook_delivery.public_id, webhook_delivery.attempts, webhook_delivery.url,
              webhook_delivery.endpoint_id, webhook_delivery.event_id, webhook_delivery.store_id,
              chosen.previous_token, chosen.previous_attempts, chosen.previous_start, chosen.left_behind
)
SELECT c.id, c.public_id, c.attempts, c.url, c.endpoint_id, c.previous_token, c.previous_attempts,
       c.previous_start, c.left_behind, e.public_id AS event_public_id, e.type AS event_type, e.payload,
       w.url AS endpoint_url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.enabled,
       w.failing_since, s.callback_secret, i.public_id AS integration_public_id
FROM claimed c
JOIN event e ON e.id = c.event_id
LEFT JOIN webhook_endpoint w ON w.id = c.endpoint_id
LEFT JOIN integration i ON i.webhook_endpoint_id = w.id
JOIN store s ON s.id = c.store_id
-- name: claim_new
SELECT pg_advisory_xact_lock(%(lock_key)s);
WITH in_flight AS (
    SELECT store_id, COALESCE(endpoint_id, store_id) AS target, COUNT(*) AS held,
           MIN(last_attempt_at) AS oldest_start
    FROM webhook_delivery
    WHERE status = 'pending' AND claim_token IS NOT NULL AND next_attempt_at > %(now)s
    GROUP BY store_id, COALESCE(endpoint_id, store_id)
), target_held AS (
    SELECT target, SUM(held) AS held FROM in_flight GROUP BY target
), store_held AS (
    SELECT store_id, SUM(held) AS held, MIN(oldest_start) AS oldest_start FROM in_flight GROUP BY store_id
), candidates AS (
    SELECT d.id, d.store_id, d.next_attempt_at, COALESCE(d.endpoint_id, d.store_id) AS target
    FROM webhook_delivery d
    WHERE d.id = ANY(%(among)s::uuid[]) AND d.status = 'pending' AND d.next_attempt_at <= %(now)s
), by_target AS (
    SELECT c.id, c.store_id, c.next_attempt_at,
           ROW_NUMBER() OVER (PARTITION BY c.target ORDER BY c.next_attempt_at, c.id) AS place,
           COUNT(*) OVER (PARTITION BY c.target) AS target_due,
           %(per_target)s - COALESCE(t.held, 0) AS target_room
    FROM candidates c LEFT JOIN target_held t ON t.target = c.target
), stores_due AS (
    SELECT COUNT(DISTINCT store_id) AS stores FROM by_target
), stores_busy AS (
    SELECT COUNT(*) AS stores FROM (SELECT store_id FROM by_target UNION SELECT store_id FROM store_held) AS busy
), by_store AS (
    SELECT b.id, b.next_attempt_at, b.target_due > b.target_room AS target_left,
           ROW_NUMBER() OVER (PARTITION BY b.store_id ORDER BY b.next_attempt_at, b.id) AS turn,
           COUNT(*) OVER (PARTITION BY b.store_id) AS store_due,
           CASE WHEN n.stores = 1 AND (s.oldest_start IS NULL OR s.oldest_start >= %(quick_since)s)
                THEN %(per_store_alone)s
                WHEN %(all_stores)s / m.stores < 1 THEN 1
                WHEN %(all_stores)s / m.stores < %(per_store)s THEN %(all_stores)s / m.stores
                ELSE %(per_store)s END - COALESCE(s.held, 0) AS store_room
    FROM by_target b LEFT JOIN store_held s ON s.store_id = b.store_id CROSS JOIN stores_due n
         CROSS JOIN stores_busy m
    WHERE b.place <= b.target_room
), chosen AS (
    SELECT d.id, d.claim_token AS previous_token, d.attempts AS previous_attempts,
           d.last_attempt_at AS previous_start, (c.target_left OR c.store_due > c.store_room) AS left_behind
    FROM (SELECT * FROM by_store WHERE turn <= store_room ORDER BY turn, next_attempt_at, id LIMIT %(limit)s) AS c
    JOIN webhook_delivery d ON d.id = c.id
    FOR UPDATE OF d SKIP LOCKED
), claimed AS (
    UPDATE webhook_delivery SET claim_token = %(token)s, attempts = webhook_delivery.attempts + 1,
           last_attempt_at = %(now)s, next_attempt_at = %(lease_end)s, updated_at = %(now)s
    FROM chosen WHERE webhook_delivery.id = chosen.id
    RETURNING webhook_delivery.id, webhook_delivery.public_id, webhook_delivery.attempts, webhook_delivery.url,
              webhook_delivery.endpoint_id, webhook_delivery.event_id, webhook_delivery.store_id,
              chosen.previous_token, chosen.previous_attempts, chosen.previous_start, chosen.left_behind
)
SELECT c.id, c.public_id, c.attempts, c.url, c.endpoint_id, c.previous_token, c.previous_attempts,
       c.previous_start, c.left_behind, e.public_id AS event_public_id, e.type AS event_type, e.payload,
       w.url AS endpoint_url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.enabled,
       w.failing_since, s.callback_secret, i.public_id AS integration_public_id
FROM claimed c
JOIN event e ON e.id = c.event_id
LEFT JOIN webhook_endpoint w ON w.id = c.endpoint_id
LEFT JOIN integration i ON i.webhook_endpoint_id = w.id
JOIN store s ON s.id = c.store_id
