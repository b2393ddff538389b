// Package atomicfile writes a file so that a crash, a kill or a full disk
// leaves either the previous file or the new one at its path, never a torn
// one. The simulator's outputs, the checkpoint example and the Volcano and
// Kueue integrations write through it. (The ledger, which imports nothing of
// this module, has its own copy of the same steps in ledger.WriteFile.)
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// Write writes path through a temporary file ".NAME.tmp-*" in the same
// directory: write fills it, then it is given perm, synced, closed and
// renamed over path, and the directory is synced (best effort: not every
// platform can). Without the sync a full disk could surface only after the
// rename, with the old file already gone. On any error the temporary file
// is removed, path is left as it was, and the error is returned unwrapped.
func Write(path string, perm os.FileMode, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// WriteBytes is Write of data.
func WriteBytes(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
