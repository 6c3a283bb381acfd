/**
 * The default rule set every role has at every scope (reference resource-manager §2.5: the
 * 17 rules of the published policy example) and the shape of a rule (spec resource-manager
 * §2.1, reference §2.4).
 */

/** The five rule types (spec §2.1). */
export const ruleTypes = [
  'RoleManagementPolicyApprovalRule',
  'RoleManagementPolicyAuthenticationContextRule',
  'RoleManagementPolicyEnablementRule',
  'RoleManagementPolicyExpirationRule',
  'RoleManagementPolicyNotificationRule',
] as const;

/** One of {@link ruleTypes}. */
export type RuleType = (typeof ruleTypes)[number];

/** `RoleManagementPolicyRuleTarget` (reference §2.4); the three arrays are `null` in the defaults. */
export interface RuleTarget {
  caller: string;
  operations: string[];
  level: string;
  targetObjects: string[] | null;
  inheritableSettings: string[] | null;
  enforcedSettings: string[] | null;
}

/** A rule as stored and returned: `id`, `ruleType`, `target` and the type's own fields. */
export interface PolicyRule {
  id: string;
  ruleType: RuleType;
  target: RuleTarget;
  [field: string]: unknown;
}

function target(caller: 'Admin' | 'EndUser', level: 'Eligibility' | 'Assignment'): RuleTarget {
  return { caller, operations: ['All'], level, targetObjects: null, inheritableSettings: null, enforcedSettings: null };
}

function enablement(caller: 'Admin' | 'EndUser', level: 'Eligibility' | 'Assignment', enabledRules: string[]): PolicyRule {
  return { enabledRules, id: `Enablement_${caller}_${level}`, ruleType: 'RoleManagementPolicyEnablementRule', target: target(caller, level) };
}

function expiration(caller: 'Admin' | 'EndUser', level: 'Eligibility' | 'Assignment', isExpirationRequired: boolean, maximumDuration: string): PolicyRule {
  return { isExpirationRequired, maximumDuration, exceptionMembers: null, id: `Expiration_${caller}_${level}`, ruleType: 'RoleManagementPolicyExpirationRule', target: target(caller, level) };
}

function notification(recipientType: 'Admin' | 'Requestor' | 'Approver', caller: 'Admin' | 'EndUser', level: 'Eligibility' | 'Assignment', isDefaultRecipientsEnabled: boolean, recipients: string[] | null): PolicyRule {
  return {
    notificationType: 'Email',
    recipientType,
    isDefaultRecipientsEnabled,
    notificationLevel: 'Critical',
    notificationRecipients: recipients,
    id: `Notification_${recipientType}_${caller}_${level}`,
    ruleType: 'RoleManagementPolicyNotificationRule',
    target: target(caller, level),
  };
}

/**
 * A fresh copy of the 17 default rules, in the order of the published example
 * (reference §2.5). Callers may mutate the result.
 */
export function defaultRules(): PolicyRule[] {
  return [
    enablement('Admin', 'Eligibility', []),
    expiration('Admin', 'Eligibility', true, 'P90D'),
    notification('Admin', 'Admin', 'Eligibility', false, ['admin_admin_eligible@test.com']),
    notification('Requestor', 'Admin', 'Eligibility', false, ['requestor_admin_eligible@test.com']),
    notification('Approver', 'Admin', 'Eligibility', false, ['approver_admin_eligible@test.com']),
    enablement('Admin', 'Assignment', ['MultiFactorAuthentication', 'Justification']),
    expiration('Admin', 'Assignment', false, 'P90D'),
    notification('Admin', 'Admin', 'Assignment', false, ['admin_admin_member@test.com']),
    notification('Requestor', 'Admin', 'Assignment', false, ['requestor_admin_member@test.com']),
    notification('Approver', 'Admin', 'Assignment', false, ['approver_admin_member@test.com']),
    {
      setting: {
        isApprovalRequired: true,
        isApprovalRequiredForExtension: false,
        isRequestorJustificationRequired: true,
        approvalMode: 'SingleStage',
        approvalStages: [
          {
            approvalStageTimeOutInDays: 1,
            isApproverJustificationRequired: true,
            escalationTimeInMinutes: 0,
            primaryApprovers: [
              { id: '2385b0f3-5fa9-43cf-8ca4-b01dc97298cd', description: 'amansw_new_group', isBackup: false, userType: 'Group' },
              { id: '2f4913c9-d15b-406a-9946-1d66a28f2690', description: 'amansw_group', isBackup: false, userType: 'Group' },
            ],
            isEscalationEnabled: false,
            escalationApprovers: null,
          },
        ],
      },
      id: 'Approval_EndUser_Assignment',
      ruleType: 'RoleManagementPolicyApprovalRule',
      target: target('EndUser', 'Assignment'),
    },
    { isEnabled: false, claimValue: '', id: 'AuthenticationContext_EndUser_Assignment', ruleType: 'RoleManagementPolicyAuthenticationContextRule', target: target('EndUser', 'Assignment') },
    enablement('EndUser', 'Assignment', ['MultiFactorAuthentication', 'Justification', 'Ticketing']),
    expiration('EndUser', 'Assignment', true, 'PT7H'),
    notification('Admin', 'EndUser', 'Assignment', false, ['admin_enduser_member@test.com']),
    notification('Requestor', 'EndUser', 'Assignment', false, ['requestor_enduser_member@test.com']),
    notification('Approver', 'EndUser', 'Assignment', true, null),
  ];
}

/**
 * The own fields of each rule type, in output order (reference §2.4); a merged rule carries
 * exactly these plus `id`, `ruleType` and `target`.
 */
export const ruleFields: Record<RuleType, string[]> = {
  RoleManagementPolicyApprovalRule: ['setting'],
  RoleManagementPolicyAuthenticationContextRule: ['isEnabled', 'claimValue'],
  RoleManagementPolicyEnablementRule: ['enabledRules'],
  RoleManagementPolicyExpirationRule: ['isExpirationRequired', 'maximumDuration', 'exceptionMembers'],
  RoleManagementPolicyNotificationRule: ['notificationType', 'recipientType', 'isDefaultRecipientsEnabled', 'notificationLevel', 'notificationRecipients'],
};
