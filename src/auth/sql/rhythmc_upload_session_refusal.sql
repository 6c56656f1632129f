-- The upload-session rule (src/auth/upload-session.rule.ts): why an upload's player session is refused,
-- null when it is accepted. Decided here only; uploadSessionError words the reason. Called by
-- rhythmc_upload_record and by the upload's transactional statement (inlined). A session row not
-- found is all nulls: 'no_session'.
CREATE OR REPLACE FUNCTION public.rhythmc_upload_session_refusal(s_uid bigint, s_logged_out_at timestamp with time zone, s_server_session_id uuid, s_token_expires_at timestamp with time zone, s_renewed_at timestamp with time zone, p_uid bigint, p_server_session_id uuid, p_now timestamp with time zone, p_live_since timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT CASE
    WHEN s_uid IS NULL OR s_logged_out_at IS NOT NULL THEN 'no_session'
    WHEN s_uid IS DISTINCT FROM p_uid THEN 'other_uid'
    WHEN s_server_session_id IS DISTINCT FROM p_server_session_id THEN
      CASE WHEN s_token_expires_at <= p_now THEN 'expired_other_server' ELSE 'other_server' END
    WHEN s_token_expires_at <= p_now AND s_renewed_at <= p_live_since THEN 'not_renewed'
  END
$function$
