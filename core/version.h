/* The program version and the Axolotl commit its rules follow. */
#ifndef CORE_VERSION_H
#define CORE_VERSION_H

#define PREFLIGHT_VERSION "0.1.0"
#define PREFLIGHT_AXOLOTL_COMMIT "067b021c8b87a9e5e380b9173c704cf7340e30f5"

/*
 * Where the source and docs/rules.md live (SARIF informationUri and each
 * rule's helpUri).  `make REPO_URL=https://...` sets it; the default is
 * the name the project is published under until it has a home of its
 * own.
 */
#ifndef PREFLIGHT_REPO_URL
#define PREFLIGHT_REPO_URL "https://github.com/preflight-dev/preflight"
#endif

#endif /* CORE_VERSION_H */
