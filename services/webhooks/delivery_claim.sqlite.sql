-- The delivery claim of delivery_claim.postgres.sql on SQLite, in three statements: the chosen rows
-- are read, claimed by id (SQLite's RETURNING cannot name another table's columns), then what
-- their attempts need is read (the same columns, the claim's own learnings filled in by
-- delivery_claim.py). No advisory lock and no row locks: the claim runs in an IMMEDIATE
-- transaction, which already holds SQLite's only write lock. The parts the two texts share are
-- written alike (tests/services/webhooks/test_claim_texts.py). Two choices, as on PostgreSQL:
-- `choose_due`, a delivery run's, and `choose_new`, a fan-out's, among the deliveries it created.
-- name: choose_due
WITH RECURSIVE in_flight AS (
    SELECT store_id, COALESCE(endpoint_id, store_id) AS target, COUNT(*) AS held,
           MIN(last_attempt_at) AS oldest_start
    FROM webhook_delivery
    WHERE status = 'pending' AND claim_token IS NOT NULL AND next_attempt_at > :now
    GROUP BY store_id, COALESCE(endpoint_id, store_id)
), target_held AS (
    SELECT target, SUM(held) AS held FROM in_flight GROUP BY target
), store_held AS (
    SELECT store_id, SUM(held) AS held, MIN(oldest_start) AS oldest_start FROM in_flight GROUP BY store_id
), due_count AS (
    SELECT COUNT(*) AS due FROM (SELECT 1 FROM webhook_delivery
                                 WHERE status = 'pending' AND next_attempt_at <= :now
                                 LIMIT :rank_all_up_to + 1) AS sample
), targets(target) AS (
    SELECT * FROM (SELECT COALESCE(endpoint_id, store_id) FROM webhook_delivery WHERE status = 'pending'
                   ORDER BY COALESCE(endpoint_id, store_id) LIMIT 1) AS first_target
    WHERE (SELECT due FROM due_count) > :rank_all_up_to
    UNION ALL
    SELECT (SELECT COALESCE(p.endpoint_id, p.store_id) FROM webhook_delivery p
            WHERE p.status = 'pending' AND COALESCE(p.endpoint_id, p.store_id) > t.target
            ORDER BY COALESCE(p.endpoint_id, p.store_id) LIMIT 1)
    FROM targets t WHERE t.target IS NOT NULL
), candidates AS (
    SELECT d.id, d.store_id, d.next_attempt_at, COALESCE(d.endpoint_id, d.store_id) AS target
    FROM webhook_delivery d
    WHERE (SELECT due FROM due_count) <= :rank_all_up_to AND d.status = 'pending' AND d.next_attempt_at <= :now
    UNION ALL
    SELECT d.id, d.store_id, d.next_attempt_at, t.target
    FROM targets t CROSS JOIN webhook_delivery d
    WHERE t.target IS NOT NULL AND d.id IN (
        SELECT x.id FROM webhook_delivery x
        WHERE x.status = 'pending' AND COALESCE(x.endpoint_id, x.store_id) = t.target AND x.next_attempt_at <= :now
        ORDER BY x.next_attempt_at, x.id LIMIT :per_target + 1)
), by_target AS (
    SELECT c.id, c.store_id, c.next_attempt_at,
           ROW_NUMBER() OVER (PARTITION BY c.target ORDER BY c.next_attempt_at, c.id) AS place,
           COUNT(*) OVER (PARTITION BY c.target) AS target_due,
           :per_target - COALESCE(t.held, 0) AS target_room
    FROM candidates c LEFT JOIN target_held t ON t.target = c.target
), stores_due AS (
    SELECT COUNT(DISTINCT store_id) AS stores FROM by_target
), stores_busy AS (
    SELECT COUNT(*) AS stores FROM (SELECT store_id FROM by_target UNION SELECT store_id FROM store_held) AS busy
), by_store AS (
    SELECT b.id, b.next_attempt_at, b.target_due > b.target_room AS target_left,
           ROW_NUMBER() OVER (PARTITION BY b.store_id ORDER BY b.next_attempt_at, b.id) AS turn,
           COUNT(*) OVER (PARTITION BY b.store_id) AS store_due,
           CASE WHEN n.stores = 1 AND (s.oldest_start IS NULL OR s.oldest_start >= :quick_since)
                THEN :per_store_alone
                WHEN :all_stores / m.stores < 1 THEN 1
                WHEN :all_stores / m.stores < :per_store THEN :all_stores / m.stores
                ELSE :per_store END - COALESCE(s.held, 0) AS store_room
    FROM by_target b LEFT JOIN store_held s ON s.store_id = b.store_id CROSS JOIN stores_due n
         CROSS JOIN stores_busy m
    WHERE b.place <= b.target_room
), chosen AS (
    SELECT d.id, d.claim_token AS previous_token, d.attempts AS previous_attempts,
           d.last_attempt_at AS previous_start, (c.target_left OR c.store_due > c.store_room) AS left_behind
    FROM (SELECT * FROM by_store WHERE turn <= store_room ORDER BY turn, next_attempt_at, id LIMIT :limit) AS c
    JOIN webhook_delivery d ON d.id = c.id
)
SELECT * FROM chosen;
-- name: choose_new
WITH in_flight AS (
    SELECT store_id, COALESCE(endpoint_id, store_id) AS target, COUNT(*) AS held,
           MIN(last_attempt_at) AS oldest_start
    FROM webhook_delivery
    WHERE status = 'pending' AND claim_token IS NOT NULL AND next_attempt_at > :now
    GROUP BY store_id, COALESCE(endpoint_id, store_id)
), target_held AS (
    SELECT target, SUM(held) AS held FROM in_flight GROUP BY target
), store_held AS (
    SELECT store_id, SUM(held) AS held, MIN(oldest_start) AS oldest_start FROM in_flight GROUP BY store_id
), candidates AS (
    SELECT d.id, d.store_id, d.next_attempt_at, COALESCE(d.endpoint_id, d.store_id) AS target
    FROM webhook_delivery d
    WHERE d.id IN (SELECT value FROM json_each(:among)) AND d.status = 'pending' AND d.next_attempt_at <= :now
), by_target AS (
    SELECT c.id, c.store_id, c.next_attempt_at,
           ROW_NUMBER() OVER (PARTITION BY c.target ORDER BY c.next_attempt_at, c.id) AS place,
           COUNT(*) OVER (PARTITION BY c.target) AS target_due,
           :per_target - COALESCE(t.held, 0) AS target_room
    FROM candidates c LEFT JOIN target_held t ON t.target = c.target
), stores_due AS (
    SELECT COUNT(DISTINCT store_id) AS stores FROM by_target
), stores_busy AS (
    SELECT COUNT(*) AS stores FROM (SELECT store_id FROM by_target UNION SELECT store_id FROM store_held) AS busy
), by_store AS (
    SELECT b.id, b.next_attempt_at, b.target_due > b.target_room AS target_left,
           ROW_NUMBER() OVER (PARTITION BY b.store_id ORDER BY b.next_attempt_at, b.id) AS turn,
           COUNT(*) OVER (PARTITION BY b.store_id) AS store_due,
           CASE WHEN n.stores = 1 AND (s.oldest_start IS NULL OR s.oldest_start >= :quick_since)
                THEN :per_store_alone
                WHEN :all_stores / m.stores < 1 THEN 1
                WHEN :all_stores / m.stores < :per_store THEN :all_stores / m.stores
                ELSE :per_store END - COALESCE(s.held, 0) AS store_room
    FROM by_target b LEFT JOIN store_held s ON s.store_id = b.store_id CROSS JOIN stores_due n
         CROSS JOIN stores_busy m
    WHERE b.place <= b.target_room
), chosen AS (
    SELECT d.id, d.claim_token AS previous_token, d.attempts AS previous_attempts,
           d.last_attempt_at AS previous_start, (c.target_left OR c.store_due > c.store_room) AS left_behind
    FROM (SELECT * FROM by_store WHERE turn <= store_room ORDER BY turn, next_attempt_at, id LIMIT :limit) AS c
    JOIN webhook_delivery d ON d.id = c.id
)
SELECT * FROM chosen;
-- name: claim
UPDATE webhook_delivery SET claim_token = :token, attempts = webhook_delivery.attempts + 1,
       last_attempt_at = :now, next_attempt_at = :lease_end, updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids));
-- name: read
SELECT c.id, c.public_id, c.attempts, c.url, c.endpoint_id, c.previous_token, c.previous_attempts,
       c.previous_start, c.left_behind, e.public_id AS event_public_id, e.type AS event_type, e.payload,
       w.url AS endpoint_url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.enabled,
       w.failing_since, s.callback_secret, i.public_id AS integration_public_id
FROM (SELECT id, public_id, attempts, url, endpoint_id, event_id, store_id, NULL AS previous_token,
             NULL AS previous_attempts, NULL AS previous_start, 0 AS left_behind
      FROM webhook_delivery WHERE id IN (SELECT value FROM json_each(:ids))) c
JOIN event e ON e.id = c.event_id
LEFT JOIN webhook_endpoint w ON w.id = c.endpoint_id
LEFT JOIN integration i ON i.webhook_endpoint_id = w.id
JOIN store s ON s.id = c.store_id
