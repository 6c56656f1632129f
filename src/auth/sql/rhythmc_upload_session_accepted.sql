-- The upload-session rule as a boolean, as the previous release calls it (rhythmc_upload_play and its
-- transactional upload statement): replaced by rhythmc_upload_session_refusal, which answers the reason.
-- Nothing of this release calls it; dropped in the next release with rhythmc_upload_play
-- (docs/decisions.md "Rolling upgrades", pending contract steps). upload-session-rule.e2e-spec.ts holds
-- the two to the same verdicts meanwhile.
CREATE OR REPLACE FUNCTION public.rhythmc_upload_session_accepted(s_uid bigint, s_logged_out_at timestamp with time zone, s_server_session_id uuid, s_token_expires_at timestamp with time zone, s_renewed_at timestamp with time zone, p_uid bigint, p_server_session_id uuid, p_now timestamp with time zone, p_live_since timestamp with time zone)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT s_uid = p_uid AND s_logged_out_at IS NULL AND s_server_session_id = p_server_session_id
     AND (s_token_expires_at > p_now OR s_renewed_at > p_live_since)
$function$
