package dev.streamshell.fs;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFs;
import org.apache.hadoop.fs.FsConstants;

/**
 * The checksummed {@code FileContext} local file system ({@code fs.AbstractFileSystem.file.impl}) over
 * {@link NoForkRawLocalFs}, as Hadoop's {@code LocalFs} is over its {@code RawLocalFs}: always {@code file:///},
 * whatever authority the path that asked for it had.
 */
public class NoForkLocalFs extends ChecksumFs {
  public NoForkLocalFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
    super(new NoForkRawLocalFs(FsConstants.LOCAL_FS_URI, conf));
  }
}
