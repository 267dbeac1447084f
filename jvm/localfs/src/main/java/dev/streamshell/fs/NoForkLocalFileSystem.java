package dev.streamshell.fs;

import org.apache.hadoop.fs.LocalFileSystem;

/**
 * Hadoop's checksummed local file system ({@code fs.file.impl}) over {@link NoForkRawLocalFileSystem}: the same
 * files and checksum files as Hadoop's own, without a process started per file.
 */
public class NoForkLocalFileSystem extends LocalFileSystem {
  public NoForkLocalFileSystem() {
    super(new NoForkRawLocalFileSystem());
  }
}
