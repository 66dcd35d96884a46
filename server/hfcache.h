/*
 * server/hfcache: config.json of a model from a local Hugging Face hub
 * cache (the layout huggingface_hub writes under ~/.cache/huggingface/hub:
 * models--ORG--NAME/refs/main names the snapshot, and
 * models--ORG--NAME/snapshots/REV/config.json is the file), for models
 * the embedded catalog lacks.  Used by `preflight serve --hf-cache DIR`
 * and `preflight check --hf-cache DIR`.
 */
#ifndef SERVER_HFCACHE_H
#define SERVER_HFCACHE_H

#include <stddef.h>

struct arena;
struct model_def;

/* 0 when dir is a readable directory; else -1 with the reason in why. */
int hfcache_check_dir(const char *dir, char *why, size_t cap);

/*
 * The model id (ORG/NAME or NAME, as base_model writes it) counted from
 * its cached config.json, allocated from a; NULL when the id is not a
 * plain hub id, the cache has no config.json for it, or the file does
 * not describe a model preflight can count.  Never follows the id out of
 * dir: ids with "..", leading dots or other characters are refused.
 */
const struct model_def *hfcache_lookup(const char *dir, const char *id,
    struct arena *a);

#endif /* SERVER_HFCACHE_H */
