/* The program version and the Axolotl commit its rules follow. */
#ifndef CORE_VERSION_H
#define CORE_VERSION_H

#define PREFLIGHT_VERSION "0.1.0"
#define PREFLIGHT_AXOLOTL_COMMIT "067b021c8b87a9e5e380b9173c704cf7340e30f5"

#endif /* CORE_VERSION_H */
