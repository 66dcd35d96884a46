/*
 * core/rules/report: what the report itself says about its findings.
 * Reported by core/report when a check produces more findings than a
 * report keeps (report_finish keeps the most severe; the counts and the
 * verdict cover every finding).  Pure.
 */
#include "core/rules_int.h"

const struct rule_row rules_report[] = {
	{ "report.truncated", SEV_INFO,
	  "more findings than a report keeps (1,000)",
	  "fix the findings listed, or check the config in parts; the counts "
	  "and the verdict cover every finding",
	  NULL },
};
const size_t rules_report_len =
    sizeof(rules_report) / sizeof(rules_report[0]);
