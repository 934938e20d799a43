import Testing
import TrawlJSON
