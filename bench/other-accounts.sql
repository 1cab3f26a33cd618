-- The rest of the tenants beside the bench account (bench/run.sh, bench/scale.sh): 300 accounts with a key each
-- and 3,000 properties, so that the key lookup and the property reads search tables of a realistic size.
-- psql variable :account = the bench account's id (it gets none of these rows).
INSERT INTO accounts (name, email)
SELECT 'Partner ' || g, 'partner' || g || '@example.com' FROM generate_series(1, 300) AS g;

INSERT INTO api_keys (account_id, environment, key_hash, prefix)
SELECT id, CASE WHEN row_number() OVER (ORDER BY id) % 2 = 0 THEN 'live' ELSE 'test' END,
       encode(sha256(convert_to('bench-key-' || id, 'UTF8')), 'hex'), 'svc_live_xxxxxx'
FROM accounts WHERE id <> :'account';

INSERT INTO properties (account_id, environment, name, internal_name, external_id, rnt_id, reports_sire,
                        requires_contract_signature)
SELECT a.id, CASE WHEN p % 3 = 0 THEN 'test' ELSE 'live' END, 'Hotel ' || a.name || ' #' || p, 'h-' || p,
       CASE WHEN p % 2 = 0 THEN 'pms-' || p END, 'RNT-' || lpad(p::text, 5, '0'), p % 4 <> 0, p % 5 = 0
FROM accounts a CROSS JOIN generate_series(1, 10) AS p WHERE a.id <> :'account';
