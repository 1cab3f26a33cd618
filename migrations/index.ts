import { Migrator } from "@effect/sql"
import m0001 from "./0001_foundation.ts"
import m0002 from "./0002_reservations.ts"
import m0003 from "./0003_documents.ts"
import m0004 from "./0004_webhooks.ts"
import m0005 from "./0005_compliance.ts"
import m0006 from "./0006_checkin.ts"
import m0007 from "./0007_mail.ts"
import m0008 from "./0008_panel.ts"
import m0009 from "./0009_event_order.ts"
import m0010 from "./0010_report_safety.ts"
import m0011 from "./0011_reference_overrides.ts"
import m0015 from "./0015_alerts.ts"
import m0016 from "./0016_trace_context.ts"
import m0017 from "./0017_secrets_at_rest.ts"
import m0018 from "./0018_delivery_endpoint_due.ts"
import m0019 from "./0019_departure.ts"
import m0020 from "./0020_report_run_indexes.ts"
import m0021 from "./0021_key_names.ts"
import m0022 from "./0022_delivery_history_retention.ts"

/** Static imports keep migrations bundle-safe and free of file-system scans (design §3). Append only. */
export const migrations = {
  "0001_foundation": m0001,
  "0002_reservations": m0002,
  "0003_documents": m0003,
  "0004_webhooks": m0004,
  "0005_compliance": m0005,
  "0006_checkin": m0006,
  "0007_mail": m0007,
  "0008_panel": m0008,
  "0009_event_order": m0009,
  "0010_report_safety": m0010,
  "0011_reference_overrides": m0011,
  "0015_alerts": m0015,
  "0016_trace_context": m0016,
  "0017_secrets_at_rest": m0017,
  "0018_delivery_endpoint_due": m0018,
  "0019_departure": m0019,
  "0020_report_run_indexes": m0020,
  "0021_key_names": m0021,
  "0022_delivery_history_retention": m0022
}

export const loader = Migrator.fromRecord(migrations)
