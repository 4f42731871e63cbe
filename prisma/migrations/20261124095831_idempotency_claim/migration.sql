-- Issue 21: the idempotency claim in one round trip. A create with an Idempotency-Key first takes a
-- transaction-scoped advisory lock on (organisation, API key, key) and then reads the stored result. The read must
-- see a result committed by the lock's previous holder, so under READ COMMITTED it cannot share the lock's
-- statement (that statement's snapshot is older than the lock). A VOLATILE PL/pgSQL function takes a fresh snapshot
-- for each statement it runs, so lock and read stay two statements in Postgres but one round trip for the service.
-- `locked` false: another request holds the key (the caller answers 409 at once; nothing was read). `locked` true and
-- `method` null: no result younger than the retention; the caller runs the request and stores its result.
CREATE FUNCTION claim_idempotency_key(p_organization_id text, p_api_key_id text, p_key text, p_retention_hours integer)
  RETURNS TABLE (locked boolean, method text, path text, request_hash character(64), response_status integer, response_body text)
  LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- The same lock key as before this function existed, so old and new processes exclude each other during a deploy.
  IF NOT pg_try_advisory_xact_lock(hashtextextended(p_organization_id || ':' || p_api_key_id || ':' || p_key, 0)) THEN
    RETURN QUERY SELECT false, NULL::text, NULL::text, NULL::character(64), NULL::integer, NULL::text;
    RETURN;
  END IF;
  -- A new statement, so a new snapshot, taken after the lock.
  RETURN QUERY SELECT true, k.method, k.path, k.request_hash, k.response_status, k.response_body
    FROM idempotency_keys k
   WHERE k.organization_id = p_organization_id AND k.api_key_id = p_api_key_id AND k.key = p_key
     AND k.created_at > now() - make_interval(hours => p_retention_hours);
  IF NOT FOUND THEN
    RETURN QUERY SELECT true, NULL::text, NULL::text, NULL::character(64), NULL::integer, NULL::text;
  END IF;
END;
$$;
