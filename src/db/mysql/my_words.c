/* my_words.c — the word lists of the MySQL/MariaDB guard (my_guard.c):
 * functions refused by name with the reason users read, the built-in
 * functions that only read (the allow-list: anything else called is a
 * stored or loadable function of the database's owner, or unknown), the
 * reserved words that may stand before a parenthesis without being a call
 * (IN (...), AS (...)), the keywords that are not reserved in every
 * version and so could also name a stored function, the system variables
 * a query may read, and the information_schema tables it may not. */
#include "db/mysql/my_words.h"

#include <string.h>
#include <strings.h>

/* Refused by name, before anything else (a trailing '*' matches any
 * rest): what they do beyond reading. */
static const tt_my_denied TT_MY_DENIED[] = {
    {"LOAD_FILE", "it reads a file on the server"},
    {"SLEEP", "it only waits, holding the connection"},
    {"BENCHMARK", "it only burns the server's time"},
    {"GET_LOCK", "it takes a named lock that outlives the query"},
    {"RELEASE_LOCK", "it releases named locks"},
    {"RELEASE_ALL_LOCKS", "it releases named locks"},
    {"IS_FREE_LOCK", "it inspects named locks of other sessions"},
    {"IS_USED_LOCK", "it inspects named locks of other sessions"},
    {"MASTER_POS_WAIT", "it waits for replication"},
    {"SOURCE_POS_WAIT", "it waits for replication"},
    {"MASTER_GTID_WAIT", "it waits for replication"},
    {"WAIT_FOR_EXECUTED_GTID_SET", "it waits for replication"},
    {"WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS", "it waits for replication"},
    {"BINLOG_GTID_POS", "it reads the server's binary log"},
    {"WSREP_*", "it waits for or reads cluster replication state"},
    {"NEXTVAL", "it advances a sequence, which is a write"},
    {"SETVAL", "it sets a sequence, which is a write"},
    {"LASTVAL", "it reads this session's sequence state"},
    {"LAST_INSERT_ID", "it reads or sets this session's state"},
    {"SYS_EXEC", "it runs a program on the server"},
    {"SYS_EVAL", "it runs a program on the server"},
    {"SYS_GET", "it reads the server's environment"},
    {"SYS_SET", "it changes the server's environment"},
    {"LIB_MYSQLUDF_*", "it is a loadable function that reaches outside the database"},
    {"DES_ENCRYPT", "it reads the server's key file"},
    {"DES_DECRYPT", "it reads the server's key file"},
    {"ENCRYPT", "it calls the server's crypt()"},
    {"VALIDATE_PASSWORD_STRENGTH", "it reads the server's password policy"},
    {"STATEMENT_DIGEST*", "it parses SQL text the guard cannot check"},
    {"GTID_SUBSET", "it reads replication state"},
    {"GTID_SUBTRACT", "it reads replication state"},
    {"ROLES_GRAPHML", "it reads the server's roles"},
};

/* Built-in functions that only read and compute, upper case. */
static const char *const TT_MY_NATIVE[] = {
    /* aggregates and windows */
    "COUNT", "SUM", "AVG", "MIN", "MAX", "GROUP_CONCAT", "JSON_ARRAYAGG", "JSON_OBJECTAGG",
    "BIT_AND", "BIT_OR", "BIT_XOR", "STD", "STDDEV", "STDDEV_POP", "STDDEV_SAMP", "VARIANCE",
    "VAR_POP", "VAR_SAMP", "ANY_VALUE", "PERCENTILE_CONT", "PERCENTILE_DISC", "MEDIAN",
    "ROW_NUMBER", "RANK", "DENSE_RANK", "PERCENT_RANK", "CUME_DIST", "NTILE", "LAG", "LEAD",
    "FIRST_VALUE", "LAST_VALUE", "NTH_VALUE", "GROUPING",
    /* strings */
    "ASCII", "BIN", "BIT_LENGTH", "CHAR_LENGTH", "CHARACTER_LENGTH", "CHR", "CONCAT", "CONCAT_WS",
    "ELT", "EXPORT_SET", "FIELD", "FIND_IN_SET", "FORMAT", "FROM_BASE64", "HEX", "INSTR", "LCASE",
    "LENGTH", "LENGTHB", "LOCATE", "LOWER", "LPAD", "LTRIM", "MAKE_SET", "MID", "NATURAL_SORT_KEY",
    "OCT", "OCTET_LENGTH", "ORD", "POSITION", "QUOTE", "REVERSE", "RPAD", "RTRIM", "SOUNDEX",
    "SPACE", "STRCMP", "SUBSTR", "SUBSTRING", "SUBSTRING_INDEX", "TO_BASE64", "TO_CHAR", "TRIM",
    "TRIM_ORACLE", "UCASE", "UNHEX", "UPPER", "WEIGHT_STRING", "REGEXP_INSTR", "REGEXP_LIKE",
    "REGEXP_REPLACE", "REGEXP_SUBSTR", "COLLATION", "CHARSET", "COERCIBILITY", "CAST", "SFORMAT",
    "FORMAT_BYTES", "FORMAT_PICO_TIME", "MD5", "SHA", "SHA1", "SHA2", "CRC32", "CRC32C",
    "AES_ENCRYPT", "AES_DECRYPT", "COMPRESS", "UNCOMPRESS", "UNCOMPRESSED_LENGTH", "RANDOM_BYTES",
    "PASSWORD", "OLD_PASSWORD", "DECODE", "ENCODE", "DECODE_HISTOGRAM", "TO_NUMBER", "KDF",
    /* numbers */
    "ABS", "ACOS", "ASIN", "ATAN", "ATAN2", "CEIL", "CEILING", "CONV", "COS", "COT", "DEGREES",
    "EXP", "FLOOR", "GREATEST", "LEAST", "LN", "LOG", "LOG10", "LOG2", "PI", "POW", "POWER",
    "RADIANS", "RAND", "ROUND", "SIGN", "SIN", "SQRT", "TAN", "TRUNCATE", "BIT_COUNT",
    /* dates and times */
    "ADDDATE", "ADDTIME", "ADD_MONTHS", "CONVERT_TZ", "CURDATE", "CURTIME", "DATE", "DATEDIFF",
    "DATE_ADD", "DATE_FORMAT", "DATE_SUB", "DAY", "DAYNAME", "DAYOFMONTH", "DAYOFWEEK",
    "DAYOFYEAR", "EXTRACT", "FROM_DAYS", "FROM_UNIXTIME", "GET_FORMAT", "HOUR", "LAST_DAY",
    "MAKEDATE", "MAKETIME", "MICROSECOND", "MINUTE", "MONTH", "MONTHNAME", "MONTHS_BETWEEN", "NOW",
    "PERIOD_ADD", "PERIOD_DIFF", "QUARTER", "SECOND", "SEC_TO_TIME", "STR_TO_DATE", "SUBDATE",
    "SUBTIME", "SYSDATE", "TIME", "TIMEDIFF", "TIMESTAMP", "TIMESTAMPADD", "TIMESTAMPDIFF",
    "TIME_FORMAT", "TIME_TO_SEC", "TO_DAYS", "TO_SECONDS", "UNIX_TIMESTAMP", "WEEK", "WEEKDAY",
    "WEEKOFYEAR", "YEAR", "YEARWEEK", "DATE_TRUNC",
    /* comparisons and control flow */
    "IFNULL", "NULLIF", "COALESCE", "ISNULL", "NVL", "NVL2", "INTERVAL", "STRCMP",
    /* the session (read-only facts) */
    "CONNECTION_ID", "CURRENT_ROLE", "SESSION_USER", "SYSTEM_USER", "USER", "VERSION",
    "FOUND_ROWS", "ROW_COUNT", "ICU_VERSION",
    /* networks and identifiers */
    "INET_ATON", "INET_NTOA", "INET6_ATON", "INET6_NTOA", "IS_IPV4", "IS_IPV6", "IS_IPV4_COMPAT",
    "IS_IPV4_MAPPED", "UUID", "UUID_SHORT", "UUID_TO_BIN", "BIN_TO_UUID", "IS_UUID", "SYS_GUID",
    "UUID_V4", "UUID_V7",
    /* dynamic columns */
    "COLUMN_CREATE", "COLUMN_GET", "COLUMN_ADD", "COLUMN_DELETE", "COLUMN_EXISTS", "COLUMN_LIST",
    "COLUMN_CHECK", "COLUMN_JSON",
    /* JSON */
    "JSON_ARRAY", "JSON_ARRAY_APPEND", "JSON_ARRAY_INSERT", "JSON_ARRAY_INTERSECT", "JSON_COMPACT",
    "JSON_CONTAINS", "JSON_CONTAINS_PATH", "JSON_DEPTH", "JSON_DETAILED", "JSON_EQUALS",
    "JSON_EXISTS", "JSON_EXTRACT", "JSON_INSERT", "JSON_KEYS", "JSON_KEY_VALUE", "JSON_LENGTH",
    "JSON_LOOSE", "JSON_MERGE", "JSON_MERGE_PATCH", "JSON_MERGE_PRESERVE", "JSON_NORMALIZE",
    "JSON_OBJECT", "JSON_OBJECT_FILTER_KEYS", "JSON_OBJECT_TO_ARRAY", "JSON_OVERLAPS",
    "JSON_PRETTY", "JSON_QUERY", "JSON_QUOTE", "JSON_REMOVE", "JSON_REPLACE", "JSON_SCHEMA_VALID",
    "JSON_SCHEMA_VALIDATION_REPORT", "JSON_SEARCH", "JSON_SET", "JSON_STORAGE_FREE",
    "JSON_STORAGE_SIZE", "JSON_TABLE", "JSON_TYPE", "JSON_UNQUOTE", "JSON_VALID", "JSON_VALUE",
    "MEMBER",
    /* XML read from values */
    "EXTRACTVALUE", "UPDATEXML",
    /* full-text and regular expressions */
    "MATCH",
    /* geometry constructors (the ST_ and MBR functions by prefix below) */
    "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON",
    "GEOMETRYCOLLECTION", "GEOMFROMTEXT", "GEOMFROMWKB", "ASTEXT", "ASWKT", "ASBINARY", "ASWKB",
    "X", "Y", "AREA", "GLENGTH", "CENTROID", "CONTAINS", "WITHIN", "INTERSECTS", "DISTANCE",
    "BOUNDARY", "BUFFER", "ENVELOPE", "GEOMETRYTYPE", "SRID", "ISEMPTY", "ISSIMPLE", "ISCLOSED",
    "ISRING", "NUMPOINTS", "STARTPOINT", "ENDPOINT", "POINTN", "NUMGEOMETRIES", "GEOMETRYN",
    "EXTERIORRING", "INTERIORRINGN", "NUMINTERIORRINGS", "DIMENSION", "CROSSES", "DISJOINT",
    "EQUALS", "OVERLAPS", "TOUCHES",
};

/* Words reserved by MySQL 5.7 and 8 and by MariaDB 10.3 to 11 alike (so
 * never a stored function's unquoted name) that may stand before '('
 * without being a call, or are grammar-level functions. */
static const char *const TT_MY_RESERVED_PAREN[] = {
    "ALL", "AND", "AS", "BETWEEN", "BINARY", "BOTH", "BY", "CASE", "CHAR", "CONVERT", "CROSS",
    "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "CURRENT_USER", "DATABASE", "DECIMAL",
    "DEFAULT", "DISTINCT", "DISTINCTROW", "DIV", "DOUBLE", "ELSE", "EXISTS", "FLOAT", "FORCE",
    "FROM", "GROUP", "HAVING", "IF", "IGNORE", "IN", "INDEX", "INNER", "INSERT", "INT", "INTEGER",
    "INTERVAL", "IS", "JOIN", "KEY", "LEADING", "LEFT", "LIKE", "LIMIT", "LOCALTIME",
    "LOCALTIMESTAMP", "MATCH", "MOD", "NATURAL", "NOT", "NUMERIC", "ON", "OR", "ORDER", "OUTER",
    "PARTITION", "REGEXP", "REPEAT", "REPLACE", "RIGHT", "RLIKE", "SCHEMA", "SELECT",
    "STRAIGHT_JOIN", "THEN", "TRAILING", "UNION", "UNSIGNED", "USE", "USING", "UTC_DATE",
    "UTC_TIME", "UTC_TIMESTAMP", "VALUES", "VARCHAR", "WHEN", "WHERE", "WITH", "XOR", "REAL",
    "SMALLINT", "TINYINT", "MEDIUMINT", "BIGINT", "DEC", "CHARACTER", "VARBINARY",
};

/* Keywords that stand before '(' in some places but are not reserved in
 * every version, so a stored function could carry the name: a call of
 * one is looked up (refused when the current database has a stored
 * function of that name). */
static const char *const TT_MY_SOFT_PAREN[] = {
    "OVER", "ROW", "ROWS", "RANGE", "GROUPS", "COLUMNS", "ANY", "SOME", "AGAINST", "EXCEPT",
    "INTERSECT", "RECURSIVE", "LATERAL", "WINDOW", "OF", "DATETIME", "NCHAR", "NVARCHAR",
    "SIGNED", "JSON", "ESCAPE", "EMPTY",
};

/* System variables a query may read (@@name): facts of the dialect and
 * the session, none a secret or a path. */
static const char *const TT_MY_SYSVARS[] = {
    "VERSION", "VERSION_COMMENT", "LOWER_CASE_TABLE_NAMES", "SQL_MODE", "TIME_ZONE",
    "SYSTEM_TIME_ZONE", "CHARACTER_SET_CLIENT", "CHARACTER_SET_CONNECTION",
    "CHARACTER_SET_DATABASE", "CHARACTER_SET_RESULTS", "CHARACTER_SET_SERVER",
    "COLLATION_CONNECTION", "COLLATION_DATABASE", "COLLATION_SERVER", "DIV_PRECISION_INCREMENT",
    "DEFAULT_WEEK_FORMAT", "LC_TIME_NAMES", "MAX_STATEMENT_TIME", "MAX_EXECUTION_TIME",
    "TX_READ_ONLY", "TRANSACTION_READ_ONLY", "AUTOCOMMIT", "IN_TRANSACTION",
    "GROUP_CONCAT_MAX_LEN", "SQL_SELECT_LIMIT", "DEFAULT_STORAGE_ENGINE", "STORAGE_ENGINE",
    "TX_ISOLATION", "TRANSACTION_ISOLATION", "CTE_MAX_RECURSION_DEPTH", "MAX_RECURSIVE_ITERATIONS",
};

/* information_schema tables that show other sessions' queries, the
 * server's settings (paths, passwords of cluster transfers) or session
 * state. */
static const char *const TT_MY_SECRET_IS_TABLES[] = {
    "PROCESSLIST",     "INNODB_TRX",      "GLOBAL_VARIABLES", "SESSION_VARIABLES",
    "SYSTEM_VARIABLES", "USER_VARIABLES", "QUERY_CACHE_INFO", "INNODB_LOCKS",
    "INNODB_LOCK_WAITS", "THREAD_POOL_QUEUES",
};

static bool tt_my_in(const char *const *list, size_t n, const char *word) {
  for (size_t i = 0; i < n; i++)
    if (strcasecmp(list[i], word) == 0) return true;
  return false;
}

#define TT_MY_IN(list, w) tt_my_in(list, sizeof list / sizeof list[0], w)

const char *tt_my_denied_why(const char *name) {
  for (size_t i = 0; i < sizeof TT_MY_DENIED / sizeof TT_MY_DENIED[0]; i++) {
    const char *p = TT_MY_DENIED[i].name;
    size_t n = strlen(p);
    if (p[n - 1] == '*' ? strncasecmp(p, name, n - 1) == 0 : strcasecmp(p, name) == 0)
      return TT_MY_DENIED[i].why;
  }
  return NULL;
}

bool tt_my_native(const char *name) {
  if (strncasecmp(name, "ST_", 3) == 0 || strncasecmp(name, "MBR", 3) == 0) return true;
  return TT_MY_IN(TT_MY_NATIVE, name);
}

bool tt_my_reserved_paren(const char *word) { return TT_MY_IN(TT_MY_RESERVED_PAREN, word); }

bool tt_my_soft_paren(const char *word) { return TT_MY_IN(TT_MY_SOFT_PAREN, word); }

bool tt_my_sysvar_readable(const char *name) { return TT_MY_IN(TT_MY_SYSVARS, name); }

bool tt_my_secret_is_table(const char *name) { return TT_MY_IN(TT_MY_SECRET_IS_TABLES, name); }
