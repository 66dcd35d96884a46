-- 0004: rule statistics of one team walk only that team's findings.  The
-- stats query filtered by team after scanning every team's findings from
-- since_id on (findings_check); with (team, check_id) first it is a range
-- of this team's rows, and rule and verdict come from the index itself.
CREATE INDEX findings_team_check ON findings (team, check_id, rule, verdict);
