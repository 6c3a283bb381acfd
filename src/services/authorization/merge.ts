/**
 * Validation of a role management policy PATCH body and the merge of its rules into the
 * current rules by rule `id` (spec resource-manager §2.1, §4.2; reference §2.4, §2.6).
 *
 * Every error is an `ApiError` 400 `InvalidRoleManagementPolicy` whose message names the
 * offending path (`properties.rules[2].target.level`) and the allowed values.
 */
import { errors, type ApiError } from '../../core/errors/index.ts';
import { isUuid } from '../../core/ids.ts';
import { ruleFields, ruleTypes, type PolicyRule, type RuleTarget, type RuleType } from './defaults.ts';

/** Enumerations of the rule fields (reference §2.4). */
export const enums = {
  caller: ['Admin', 'EndUser'],
  operations: ['All'],
  level: ['Eligibility', 'Assignment'],
  enabledRules: ['MultiFactorAuthentication', 'Justification', 'Ticketing'],
  notificationType: ['Email'],
  notificationLevel: ['None', 'Critical', 'All'],
  recipientType: ['Requestor', 'Approver', 'Admin'],
  approvalMode: ['SingleStage', 'Serial', 'Parallel', 'NoApproval'],
  userType: ['User', 'Group'],
} as const;

/** Limits on lists inside a rule (Stratus choices; the sources state none). */
export const ruleLimits = { maxRules: 100, maxRecipients: 50, maxStages: 5, maxApprovers: 50, maxApprovalDays: 30, maxEscalationMinutes: 30 * 24 * 60, maxClaimValueLength: 256, maxDescriptionLength: 1024, maxDurationLength: 64, maxTargetItems: 50, maxTargetItemLength: 256 };

/** ISO 8601 duration as used by the service (`P90D`, `PT7H`, `P1Y2M3DT4H5M6.5S`, `P2W`): at least one component. */
const isoDuration = /^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/;

/** A practical e-mail address shape: local part, `@`, a dotted domain; no spaces. */
const emailPattern = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** True when `s` is an ISO 8601 duration with at least one component. */
export function isIsoDuration(s: string): boolean {
  return isoDuration.test(s);
}

function bad(message: string): ApiError {
  return errors.arm.invalidRoleManagementPolicy({ message });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How an error message shows a value: strings quoted (cut at 100 characters), numbers and booleans as written, else its kind. */
function describe(v: unknown): string {
  if (v === undefined) return '(missing)';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return v.length > 100 ? `'${v.slice(0, 100)}…'` : `'${v}'`;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return 'an object';
}

function checkEnum(path: string, v: unknown, allowed: readonly string[]): string {
  if (typeof v !== 'string' || !allowed.includes(v)) throw bad(`The value ${describe(v)} of '${path}' is invalid. Allowed values: ${allowed.join(', ')}.`);
  return v;
}

function checkBool(path: string, v: unknown): boolean {
  if (typeof v !== 'boolean') throw bad(`The value ${describe(v)} of '${path}' is invalid: a boolean is expected.`);
  return v;
}

function checkInt(path: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw bad(`The value ${describe(v)} of '${path}' is invalid: an integer from ${min} to ${max} is expected.`);
  return v;
}

function checkStringArrayOrNull(path: string, v: unknown): string[] | null {
  if (v === null) return null;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw bad(`The value of '${path}' is invalid: an array of strings or null is expected.`);
  if (v.length > ruleLimits.maxTargetItems || v.some((x) => x.length > ruleLimits.maxTargetItemLength)) {
    throw bad(`'${path}' may hold at most ${ruleLimits.maxTargetItems} strings of at most ${ruleLimits.maxTargetItemLength} characters.`);
  }
  return [...v] as string[];
}

/** Validates one approver (`UserSet`): `id` a GUID, `userType` User or Group. */
function checkUserSet(path: string, v: unknown): Record<string, unknown> {
  if (!isObject(v)) throw bad(`The value of '${path}' is invalid: an approver object is expected.`);
  if (typeof v.id !== 'string' || !isUuid(v.id)) throw bad(`The value ${describe(v.id)} of '${path}.id' is invalid: the object id of the approving principal (a GUID) is expected.`);
  const out: Record<string, unknown> = { id: v.id.toLowerCase() };
  if (v.description !== undefined && v.description !== null && (typeof v.description !== 'string' || v.description.length > ruleLimits.maxDescriptionLength)) {
    throw bad(`The value of '${path}.description' is invalid: a string of at most ${ruleLimits.maxDescriptionLength} characters is expected.`);
  }
  out.description = v.description ?? null;
  out.isBackup = v.isBackup === undefined ? false : checkBool(`${path}.isBackup`, v.isBackup);
  out.userType = checkEnum(`${path}.userType`, v.userType, enums.userType);
  return out;
}

function checkUserSets(path: string, v: unknown, allowNull: boolean): Record<string, unknown>[] | null {
  if (v === null && allowNull) return null;
  if (!Array.isArray(v)) throw bad(`The value of '${path}' is invalid: an array of approvers${allowNull ? ' or null' : ''} is expected.`);
  if (v.length > ruleLimits.maxApprovers) throw bad(`'${path}' holds ${v.length} approvers; at most ${ruleLimits.maxApprovers} are allowed.`);
  return v.map((x, i) => checkUserSet(`${path}[${i}]`, x));
}

/** Validates a rule's `target`; its caller and level must be those the rule id names. */
function checkTarget(path: string, v: unknown, current: RuleTarget): RuleTarget {
  if (!isObject(v)) throw bad(`The value of '${path}' is invalid: an object with caller, operations and level is expected.`);
  const caller = v.caller === undefined ? current.caller : checkEnum(`${path}.caller`, v.caller, enums.caller);
  const level = v.level === undefined ? current.level : checkEnum(`${path}.level`, v.level, enums.level);
  let operations = current.operations;
  if (v.operations !== undefined) {
    if (!Array.isArray(v.operations) || v.operations.length === 0) throw bad(`The value of '${path}.operations' is invalid: a non-empty array of ${enums.operations.join(', ')} is expected.`);
    operations = v.operations.map((o, i) => checkEnum(`${path}.operations[${i}]`, o, enums.operations));
  }
  if (caller !== current.caller || level !== current.level) {
    throw bad(`The target of '${path.replace(/\.target$/, '')}' must have caller '${current.caller}' and level '${current.level}', as its rule id states; got caller '${caller}' and level '${level}'.`);
  }
  const arr = (k: 'targetObjects' | 'inheritableSettings' | 'enforcedSettings') => (v[k] === undefined ? current[k] : checkStringArrayOrNull(`${path}.${k}`, v[k]));
  return { caller, operations, level, targetObjects: arr('targetObjects'), inheritableSettings: arr('inheritableSettings'), enforcedSettings: arr('enforcedSettings') };
}

/** Validates the approval `setting` (stages, approvers, mode). */
function checkApprovalSetting(path: string, v: unknown): Record<string, unknown> {
  if (!isObject(v)) throw bad(`The value of '${path}' is invalid: an approval setting object is expected.`);
  const isApprovalRequired = checkBool(`${path}.isApprovalRequired`, v.isApprovalRequired);
  const isApprovalRequiredForExtension = v.isApprovalRequiredForExtension === undefined ? false : checkBool(`${path}.isApprovalRequiredForExtension`, v.isApprovalRequiredForExtension);
  const isRequestorJustificationRequired = v.isRequestorJustificationRequired === undefined ? false : checkBool(`${path}.isRequestorJustificationRequired`, v.isRequestorJustificationRequired);
  const approvalMode = checkEnum(`${path}.approvalMode`, v.approvalMode, enums.approvalMode);
  const stagesIn = v.approvalStages ?? [];
  if (!Array.isArray(stagesIn)) throw bad(`The value of '${path}.approvalStages' is invalid: an array of approval stages is expected.`);
  if (stagesIn.length > ruleLimits.maxStages) throw bad(`'${path}.approvalStages' holds ${stagesIn.length} stages; at most ${ruleLimits.maxStages} are allowed.`);
  const approvalStages = stagesIn.map((s, i) => {
    const sp = `${path}.approvalStages[${i}]`;
    if (!isObject(s)) throw bad(`The value of '${sp}' is invalid: an approval stage object is expected.`);
    const primaryApprovers = checkUserSets(`${sp}.primaryApprovers`, s.primaryApprovers ?? [], false)!;
    const isEscalationEnabled = s.isEscalationEnabled === undefined ? false : checkBool(`${sp}.isEscalationEnabled`, s.isEscalationEnabled);
    const escalationApprovers = checkUserSets(`${sp}.escalationApprovers`, s.escalationApprovers ?? null, true);
    if (isApprovalRequired && primaryApprovers.length === 0) throw bad(`'${sp}.primaryApprovers' must name at least one approver when approval is required.`);
    if (isEscalationEnabled && (!escalationApprovers || escalationApprovers.length === 0)) throw bad(`'${sp}.escalationApprovers' must name at least one approver when escalation is enabled.`);
    return {
      approvalStageTimeOutInDays: checkInt(`${sp}.approvalStageTimeOutInDays`, s.approvalStageTimeOutInDays, 1, ruleLimits.maxApprovalDays),
      isApproverJustificationRequired: s.isApproverJustificationRequired === undefined ? false : checkBool(`${sp}.isApproverJustificationRequired`, s.isApproverJustificationRequired),
      escalationTimeInMinutes: s.escalationTimeInMinutes === undefined ? 0 : checkInt(`${sp}.escalationTimeInMinutes`, s.escalationTimeInMinutes, 0, ruleLimits.maxEscalationMinutes),
      primaryApprovers,
      isEscalationEnabled,
      escalationApprovers,
    };
  });
  if (approvalMode === 'SingleStage' && isApprovalRequired && approvalStages.length !== 1) throw bad(`'${path}.approvalStages' must hold exactly one stage when approvalMode is 'SingleStage' and approval is required; it holds ${approvalStages.length}.`);
  if (approvalMode === 'NoApproval' && isApprovalRequired) throw bad(`'${path}.isApprovalRequired' cannot be true when approvalMode is 'NoApproval'.`);
  if (isApprovalRequired && approvalStages.length === 0) throw bad(`'${path}.approvalStages' must hold at least one stage when approval is required.`);
  return { isApprovalRequired, isApprovalRequiredForExtension, isRequestorJustificationRequired, approvalMode, approvalStages };
}

/** Validates the type's own fields of `v`; fields the body leaves out keep their current values. */
function checkOwnFields(path: string, type: RuleType, v: Record<string, unknown>, current: PolicyRule): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of ruleFields[type]) out[f] = v[f] === undefined ? current[f] : v[f];
  switch (type) {
    case 'RoleManagementPolicyExpirationRule': {
      out.isExpirationRequired = checkBool(`${path}.isExpirationRequired`, out.isExpirationRequired);
      if (typeof out.maximumDuration !== 'string' || out.maximumDuration.length > ruleLimits.maxDurationLength || !isIsoDuration(out.maximumDuration)) {
        throw bad(`The value ${describe(out.maximumDuration)} of '${path}.maximumDuration' is not a valid ISO 8601 duration (for example 'P90D', 'PT8H', 'P1DT12H').`);
      }
      out.exceptionMembers = checkUserSets(`${path}.exceptionMembers`, out.exceptionMembers ?? null, true);
      break;
    }
    case 'RoleManagementPolicyNotificationRule': {
      out.notificationType = checkEnum(`${path}.notificationType`, out.notificationType, enums.notificationType);
      out.recipientType = checkEnum(`${path}.recipientType`, out.recipientType, enums.recipientType);
      if (out.recipientType !== current.recipientType) throw bad(`The value '${out.recipientType}' of '${path}.recipientType' does not match the rule id '${current.id}', which is for recipient type '${current.recipientType}'.`);
      out.isDefaultRecipientsEnabled = checkBool(`${path}.isDefaultRecipientsEnabled`, out.isDefaultRecipientsEnabled);
      out.notificationLevel = checkEnum(`${path}.notificationLevel`, out.notificationLevel, enums.notificationLevel);
      const r = out.notificationRecipients;
      if (r !== null) {
        if (!Array.isArray(r)) throw bad(`The value of '${path}.notificationRecipients' is invalid: an array of e-mail addresses or null is expected.`);
        if (r.length > ruleLimits.maxRecipients) throw bad(`'${path}.notificationRecipients' holds ${r.length} addresses; at most ${ruleLimits.maxRecipients} are allowed.`);
        r.forEach((a, i) => {
          if (typeof a !== 'string' || a.length > 254 || !emailPattern.test(a)) throw bad(`The value ${describe(a)} of '${path}.notificationRecipients[${i}]' is not a valid e-mail address.`);
        });
        out.notificationRecipients = [...r];
      }
      break;
    }
    case 'RoleManagementPolicyEnablementRule': {
      const e = out.enabledRules;
      if (!Array.isArray(e)) throw bad(`The value of '${path}.enabledRules' is invalid: an array of ${enums.enabledRules.join(', ')} is expected.`);
      e.forEach((x, i) => checkEnum(`${path}.enabledRules[${i}]`, x, enums.enabledRules));
      if (new Set(e).size !== e.length) throw bad(`'${path}.enabledRules' names a value more than once.`);
      out.enabledRules = [...e];
      break;
    }
    case 'RoleManagementPolicyApprovalRule':
      out.setting = checkApprovalSetting(`${path}.setting`, out.setting);
      break;
    case 'RoleManagementPolicyAuthenticationContextRule': {
      out.isEnabled = checkBool(`${path}.isEnabled`, out.isEnabled);
      const c = out.claimValue ?? '';
      if (typeof c !== 'string' || c.length > ruleLimits.maxClaimValueLength) throw bad(`The value of '${path}.claimValue' is invalid: a string of at most ${ruleLimits.maxClaimValueLength} characters is expected.`);
      if (out.isEnabled && c.trim() === '') throw bad(`'${path}.claimValue' must name an authentication context when the rule is enabled.`);
      out.claimValue = c;
      break;
    }
  }
  return out;
}

/**
 * Validates a PATCH body `{"properties":{"rules":[…]}}` and merges its rules into `current`
 * by `id` (reference §2.6): each sent rule replaces its namesake, fields it leaves out keep
 * their current values, untouched rules stay as they are; the order of `current` is kept.
 * Read-only fields of the body (`id`, `name`, `effectiveRules`, …) are ignored.
 * @returns the merged rules (a new array; `current` is not changed).
 * @throws ApiError 400 `InvalidRoleManagementPolicy` for any rule that breaks a rule of
 *   spec §2.1 / reference §2.4, an unknown rule id, a rule id sent twice or a `ruleType`
 *   that differs from the rule's.
 */
export function mergeRules(current: PolicyRule[], body: unknown): PolicyRule[] {
  if (!isObject(body)) throw bad('The request body must be a JSON object of the form {"properties":{"rules":[...]}}.');
  if (!isObject(body.properties)) throw bad("The request body has no 'properties' object; expected {\"properties\":{\"rules\":[...]}}.");
  const rules = body.properties.rules;
  if (!Array.isArray(rules)) throw bad("'properties.rules' is required and must be an array of rules.");
  if (rules.length > ruleLimits.maxRules) throw bad(`'properties.rules' holds ${rules.length} rules; at most ${ruleLimits.maxRules} are allowed.`);
  const byId = new Map(current.map((r) => [r.id.toLowerCase(), r]));
  const replaced = new Map<string, PolicyRule>();
  rules.forEach((r, i) => {
    const path = `properties.rules[${i}]`;
    if (!isObject(r)) throw bad(`The value of '${path}' is invalid: a rule object is expected.`);
    const ruleType = checkEnum(`${path}.ruleType`, r.ruleType, ruleTypes) as RuleType;
    if (typeof r.id !== 'string' || r.id === '') throw bad(`'${path}.id' is required: the id of the rule to update (for example 'Expiration_Admin_Eligibility').`);
    const existing = byId.get(r.id.toLowerCase());
    if (!existing) throw bad(`The rule id '${r.id}' of '${path}.id' does not exist in the policy. Known rule ids: ${current.map((c) => c.id).join(', ')}.`);
    if (replaced.has(existing.id)) throw bad(`The rule id '${existing.id}' is given more than once in 'properties.rules'.`);
    if (ruleType !== existing.ruleType) throw bad(`The ruleType '${ruleType}' of '${path}' does not match rule '${existing.id}', which is a '${existing.ruleType}'.`);
    const target = r.target === undefined ? existing.target : checkTarget(`${path}.target`, r.target, existing.target);
    const own = checkOwnFields(path, ruleType, r, existing);
    replaced.set(existing.id, { ...own, id: existing.id, ruleType, target } as PolicyRule);
  });
  return current.map((c) => replaced.get(c.id) ?? c);
}
