package dev.streamshell.fs;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFs;

/**
 * The checksummed {@code FileContext} local file system ({@code fs.AbstractFileSystem.file.impl}) over
 * {@link NoForkRawLocalFs}, as Hadoop's {@code LocalFs} is over its {@code RawLocalFs}.
 */
public class NoForkLocalFs extends ChecksumFs {
  public NoForkLocalFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
    super(new NoForkRawLocalFs(uri, conf));
  }
}
