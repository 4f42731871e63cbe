-- AlterTable
ALTER TABLE "rate_limit_buckets" ADD COLUMN     "last_granted" INTEGER NOT NULL DEFAULT 0;

-- Processes keep the keys they authenticated in memory (platform/access/key-cache.ts). Any change to a key or to
-- its organisation (revoked, rotated, expired early, scopes, limits, allowlist, API access, modules) tells every
-- process on commit, through NOTIFY on the channel access_changed with the organisation's id as the payload; each
-- drops what it holds of that organisation. A trigger, not the application, sends it: an operator's SQL session
-- or a later code path cannot change access without the processes learning of it. A TRUNCATE names no row: '*'.
CREATE FUNCTION notify_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify('access_changed', '*');
  ELSIF TG_TABLE_NAME = 'organizations' THEN
    PERFORM pg_notify('access_changed', OLD.id);
  ELSE
    PERFORM pg_notify('access_changed', OLD.organization_id);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER api_keys_access_changed AFTER UPDATE OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION notify_access_changed();
CREATE TRIGGER api_keys_access_truncated AFTER TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION notify_access_changed();
CREATE TRIGGER organizations_access_changed AFTER UPDATE OR DELETE ON organizations
  FOR EACH ROW EXECUTE FUNCTION notify_access_changed();
CREATE TRIGGER organizations_access_truncated AFTER TRUNCATE ON organizations
  FOR EACH STATEMENT EXECUTE FUNCTION notify_access_changed();
