/*
 * cli_profiles.h - `idemload profiles [NAME]`: the built-in channel
 * profiles, listed, or one printed as a profile file.
 */
#ifndef IDEMLOAD_CLI_PROFILES_H
#define IDEMLOAD_CLI_PROFILES_H

#include "core/config.h"

/* Writes to stdout; returns the exit status (2 for an unknown NAME). */
int cli_profiles(const config *cfg);

#endif
