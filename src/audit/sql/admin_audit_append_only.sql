-- Trigger on admin_audit: refuses UPDATE, DELETE and TRUNCATE, except the pseudonymising UPDATE below.
CREATE OR REPLACE FUNCTION public.admin_audit_append_only()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
            BEGIN
                -- Nested: a statement-level (TRUNCATE) call has no NEW row to compare.
                IF TG_OP = 'UPDATE' AND current_setting('rhythmc.audit_pseudonymise', true) = 'on' THEN
                    IF NEW.id = OLD.id AND NEW.at = OLD.at AND NEW.action = OLD.action
                       AND NEW.credential = OLD.credential
                       AND NEW.request_id IS NOT DISTINCT FROM OLD.request_id
                       AND NEW.source_address IS NOT DISTINCT FROM OLD.source_address
                       AND NEW.actor IS NOT DISTINCT FROM OLD.actor
                       AND NEW.actor_id IS NOT DISTINCT FROM OLD.actor_id THEN
                        RETURN NEW;
                    END IF;
                END IF;
                RAISE EXCEPTION 'admin_audit is append-only';
            END
            $function$
