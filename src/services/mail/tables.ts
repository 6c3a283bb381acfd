/**
 * The tables of the mail area, declared once: the columns its migrations create, in
 * migration order (`nullable` where the column may hold NULL, `withDefault`/`autoKey` where
 * the database fills the value in). MailDatabase is the Kysely interface derived from them;
 * test/database-types.test.ts compares the declaration with the migrated schema on both
 * dialects.
 */
import { defineTables, autoKey, bigint, integer, nullable, text, type Tables } from '../../store/columns.ts';

/** The columns of the mail tables, by table (see the file comment). */
export const mailColumns = defineTables({
  /** Created by `mailsync_0001_mail_changes` (the change log lives in `mail/changes.ts`). */
  mail_changes: {
    seq: autoKey(),
    tenant_id: text(),
    mailbox_id: text(),
    folder_id: text(),
    message_id: text(),
    change_type: text(),
    at: text(),
  },
  /** Created by `mail_0001_store`. */
  mail_attachments: {
    id: text(),
    message_pk: bigint(),
    kind: text(),
    name: text(),
    content_type: nullable(text()),
    size: integer(),
    is_inline: integer(),
    modified_at: text(),
    doc: text(),
  },
  /** Created by `mail_0001_store`. */
  mail_categories: {
    message_pk: bigint(),
    name: text(),
  },
  /** Created by `mail_0001_store`. */
  mail_extensions: {
    message_pk: bigint(),
    name: text(),
    doc: text(),
  },
  /** Created by `mail_0001_store`. */
  mail_folders: {
    id: text(),
    tenant_id: text(),
    mailbox_id: text(),
    parent_id: nullable(text()),
    well_known: nullable(text()),
    display_name: text(),
    is_hidden: integer(),
    created_at: text(),
  },
  /** Created by `mail_0001_store`. */
  mail_messages: {
    pk: autoKey(),
    id: text(),
    immutable_id: text(),
    tenant_id: text(),
    mailbox_id: text(),
    folder_id: text(),
    created_at: text(),
    modified_at: text(),
    received_at: text(),
    sent_at: nullable(text()),
    is_read: integer(),
    is_draft: integer(),
    has_attachments: integer(),
    is_mentioned: integer(),
    importance: text(),
    inference: text(),
    flag_status: text(),
    subject: text(),
    subject_lc: text(),
    from_address_lc: nullable(text()),
    from_name: nullable(text()),
    sender_address_lc: nullable(text()),
    conversation_id: text(),
    internet_message_id: text(),
    change_key: text(),
    from_text: text(),
    search_body: text(),
    doc: text(),
  },
  /** Created by `mail_0001_store`. */
  mail_multi_props: {
    message_pk: bigint(),
    prop_id: text(),
    value: text(),
    value_lc: text(),
  },
  /** Created by `mail_0001_store`. */
  mail_outbound: {
    id: text(),
    tenant_id: text(),
    mailbox_id: text(),
    internet_message_id: text(),
    sender: text(),
    recipients: text(),
    subject: text(),
    sent_at: text(),
    doc: text(),
  },
  /** Created by `mail_0001_store`. */
  mail_single_props: {
    message_pk: bigint(),
    prop_id: text(),
    value: text(),
    value_lc: text(),
  },
  /** Created by `mail_0003_id_history`. */
  mail_id_history: {
    rest_id: text(),
    immutable_id: text(),
    tenant_id: text(),
    mailbox_id: text(),
  },
  /** Created by `mail_0004_upload_sessions`. */
  mail_upload_chunks: {
    token: text(),
    start_offset: integer(),
    data: text(),
  },
  /** Created by `mail_0004_upload_sessions`. */
  mail_upload_sessions: {
    token: text(),
    tenant_id: text(),
    mailbox_id: text(),
    message_pk: bigint(),
    name: text(),
    size: integer(),
    content_type: text(),
    is_inline: integer(),
    content_id: nullable(text()),
    next_offset: integer(),
    expires_at: text(),
  },
  /** Created by `mail_0006_folder_counts`. */
  mail_folder_counts: {
    folder_id: text(),
    tenant_id: text(),
    mailbox_id: text(),
    total: bigint(),
    unread: bigint(),
  },
  /** Created by `mail_0007_mailbox_versions`. */
  mail_mailbox_versions: {
    tenant_id: text(),
    mailbox_id: text(),
    version: bigint(),
  },
});

/** The mail tables as Kysely sees them. */
export type MailDatabase = Tables<typeof mailColumns>;
