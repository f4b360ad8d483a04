#ifndef PTXBENCH_COMMON_CACHE_DIR_H_
#define PTXBENCH_COMMON_CACHE_DIR_H_

#include <string>

namespace ptxbench {

// This user's cache folder of ptxbench: $XDG_CACHE_HOME/ptxbench, else
// ~/.cache/ptxbench, else /tmp/ptxbench-<uid>. What is kept there is
// rebuilt when missing; a reader trusts a file of it only as PrivateFile
// says.
std::string UserCacheDir();

// Whether `path` is a regular file (no link) that only this process's user
// can have written: owned by the effective uid, not writable by group or
// others, in a folder of the same kind. A cache that decides a verdict (the
// vendor code table) is read only then; anything else is rebuilt.
bool PrivateFile(const std::string& path);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_CACHE_DIR_H_
