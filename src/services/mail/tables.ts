/**
 * The tables of the mail area as Kysely sees them: one interface per table its migrations
 * create (columns in migration order; `Generated<>` where the database fills a value in,
 * `| null` where the column is nullable). test/database-types.test.ts checks them against
 * the migrated schema on both dialects.
 */
import type { Int8, Int8Key } from '../../store/tables.ts';

/** A row of `mail_attachments` (created by migration `mail_0001_store`). */
export interface MailAttachmentsTable {
  id: string;
  message_pk: Int8;
  kind: string;
  name: string;
  content_type: string | null;
  size: number;
  is_inline: number;
  modified_at: string;
  doc: string;
}

/** A row of `mail_categories` (created by migration `mail_0001_store`). */
export interface MailCategoriesTable {
  message_pk: Int8;
  name: string;
}

/** A row of `mail_extensions` (created by migration `mail_0001_store`). */
export interface MailExtensionsTable {
  message_pk: Int8;
  name: string;
  doc: string;
}

/** A row of `mail_folders` (created by migration `mail_0001_store`). */
export interface MailFoldersTable {
  id: string;
  tenant_id: string;
  mailbox_id: string;
  parent_id: string | null;
  well_known: string | null;
  display_name: string;
  is_hidden: number;
  created_at: string;
}

/** A row of `mail_messages` (created by migration `mail_0001_store`). */
export interface MailMessagesTable {
  pk: Int8Key;
  id: string;
  immutable_id: string;
  tenant_id: string;
  mailbox_id: string;
  folder_id: string;
  created_at: string;
  modified_at: string;
  received_at: string;
  sent_at: string | null;
  is_read: number;
  is_draft: number;
  has_attachments: number;
  is_mentioned: number;
  importance: string;
  inference: string;
  flag_status: string;
  subject: string;
  subject_lc: string;
  from_address_lc: string | null;
  from_name: string | null;
  sender_address_lc: string | null;
  conversation_id: string;
  internet_message_id: string;
  change_key: string;
  from_text: string;
  search_body: string;
  doc: string;
}

/** A row of `mail_multi_props` (created by migration `mail_0001_store`). */
export interface MailMultiPropsTable {
  message_pk: Int8;
  prop_id: string;
  value: string;
  value_lc: string;
}

/** A row of `mail_outbound` (created by migration `mail_0001_store`). */
export interface MailOutboundTable {
  id: string;
  tenant_id: string;
  mailbox_id: string;
  internet_message_id: string;
  sender: string;
  recipients: string;
  subject: string;
  sent_at: string;
  doc: string;
}

/** A row of `mail_single_props` (created by migration `mail_0001_store`). */
export interface MailSinglePropsTable {
  message_pk: Int8;
  prop_id: string;
  value: string;
  value_lc: string;
}

/** A row of `mail_id_history` (created by migration `mail_0003_id_history`). */
export interface MailIdHistoryTable {
  rest_id: string;
  immutable_id: string;
  tenant_id: string;
  mailbox_id: string;
}

/** A row of `mail_upload_chunks` (created by migration `mail_0004_upload_sessions`). */
export interface MailUploadChunksTable {
  token: string;
  start_offset: number;
  data: string;
}

/** A row of `mail_upload_sessions` (created by migration `mail_0004_upload_sessions`). */
export interface MailUploadSessionsTable {
  token: string;
  tenant_id: string;
  mailbox_id: string;
  message_pk: Int8;
  name: string;
  size: number;
  content_type: string;
  is_inline: number;
  content_id: string | null;
  next_offset: number;
  expires_at: string;
}

/** A row of `mail_folder_counts` (created by migration `mail_0006_folder_counts`). */
export interface MailFolderCountsTable {
  folder_id: string;
  tenant_id: string;
  mailbox_id: string;
  total: Int8;
  unread: Int8;
}

export interface MailDatabase {
  mail_attachments: MailAttachmentsTable;
  mail_categories: MailCategoriesTable;
  mail_extensions: MailExtensionsTable;
  mail_folders: MailFoldersTable;
  mail_messages: MailMessagesTable;
  mail_multi_props: MailMultiPropsTable;
  mail_outbound: MailOutboundTable;
  mail_single_props: MailSinglePropsTable;
  mail_id_history: MailIdHistoryTable;
  mail_upload_chunks: MailUploadChunksTable;
  mail_upload_sessions: MailUploadSessionsTable;
  mail_folder_counts: MailFolderCountsTable;
}
